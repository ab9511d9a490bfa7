"""``session_history`` over the PostgreSQL store: the one tool
(:class:`segue._retrieval.tool.SessionHistoryTool`) over
:class:`segue.postgres._backend.PostgresBackend`, where the SQL side lives."""

from __future__ import annotations

from segue._retrieval.tool import MAX_SCAN_BYTES, MAX_SCAN_ROWS, SessionHistoryTool
from segue.postgres._backend import PostgresBackend, snapshot_of
from segue.postgres._store import PostgresStore


class PgSessionHistoryTool(SessionHistoryTool):
    """``session_history`` for a workspace kept in PostgreSQL."""

    def __init__(  # the shared tool, only built over the PostgreSQL backend
        self,
        store: PostgresStore,
        *,
        max_bytes: int = MAX_SCAN_BYTES,
        max_rows: int = MAX_SCAN_ROWS,
        rederive: bool = True,
    ) -> None:
        """``rederive``: derive the agent's columns again when another version of segue
        derived them (a write to the database); without it such a call answers
        ``history_changed`` naming ``segue store init``."""
        self.store = store
        self._setup(PostgresBackend(store, rederive=rederive), max_bytes, max_rows)


__all__ = ["PgSessionHistoryTool", "snapshot_of"]
