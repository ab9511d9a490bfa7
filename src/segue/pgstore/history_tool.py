"""``session_history`` over the PostgreSQL store, answered in SQL (SPEC.md §8, R23-R27).

Each call is one bounded page read in **one** REPEATABLE READ, read-only transaction
(``PostgresStore.snapshot``), so the floor, the rows and the workspace's epoch are those of
one instant whatever other machines append meanwhile:

1. validate the arguments and the cursor (signature, workspace, action, binding), exactly as
   the JSONL tool does (:mod:`segue.retrieval.cursor`: a cursor is at most 256 characters);
2. a cursor stays valid while the workspace's epoch does: a verified append keeps it, every
   rewrite (rotation, quarantine, hard clear, a migrated-in copy) sets a new one, and the
   cursor then expires (``stale_cursor``) as it does on disk (R26, R29);
3. a continuation first looks for a floor candidate among the rows appended since its last
   page: a new floor ends the query (R26);
4. the page itself comes from :mod:`segue.pgstore.pages`, shaped and bounded by the JSONL
   path's own code (:mod:`segue.retrieval.pages`, :mod:`segue.retrieval.envelope`).

A lost connection or a server restart during the page answers ``history_changed`` (call
again): the transaction saw nothing, so nothing from below a floor can leak. Rows whose
agent columns were derived by another version of segue are derived again first
(:mod:`segue.history.pg_derive`), or, for a reader that must not write, the call says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from segue.errors import LockTimeout, StoreError
from segue.history.pg_derive import fingerprint
from segue.history.pg_schema import redact
from segue.history.postgres import PgSnapshot, PostgresStore, WorkspaceState
from segue.pgstore import pages as sql_pages
from segue.retrieval import envelope, pages
from segue.retrieval.cursor import (
    CursorError,
    CursorState,
    binding,
    encode,
    request_state,
    with_snapshot,
)
from segue.retrieval.cursor import snapshot_of as cursor_snapshot
from segue.retrieval.reader import Budget
from segue.retrieval.schema import DESCRIPTION, TOOL_SCHEMA, ArgumentError, Request, parse
from segue.retrieval.snapshot import Snapshot, continuation_ok
from segue.retrieval.tool import MAX_SCAN_BYTES, MAX_SCAN_ROWS, SessionHistoryTool
from segue.workspace import Layout

#: the JSONL tool's words, so both stores answer alike
_STALE = (
    "the transcript was rewritten, rotated or changed outside segue since this cursor was "
    "issued; start a new query"
)


class _Underived(Exception):
    """The workspace's agent columns come from another version of the code."""


def snapshot_of(state: WorkspaceState) -> Snapshot:
    """The workspace row as the cursor module's snapshot: the epoch is the whole of it (no
    files, no stamps); ``chat_size`` is the next row position, what a continuation checks
    for new floors from. Before the first write there is no epoch: nothing may change."""
    return Snapshot(bool(state.epoch), state.epoch, None, None, 0, state.next_pos)


class PgSessionHistoryTool:
    """``session_history`` for a workspace kept in PostgreSQL (see the module docstring)."""

    name = SessionHistoryTool.name
    read_only = True
    description = DESCRIPTION

    def __init__(
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
        self.max_bytes = max_bytes
        self.max_rows = max_rows
        self.rederive = rederive
        # the page code's context names a layout; nothing of it is read here
        self._layout = Layout(Path(), store.workspace_id)

    @property
    def schema(self) -> Mapping[str, Any]:
        return TOOL_SCHEMA

    def run(self, args: Mapping[str, Any]) -> dict[str, Any]:
        return self.call(args)

    def call(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """Answer one call; never raises for anything the model or the database can cause."""
        try:
            req = parse(args)
            state = self._cursor(req)
        except (ArgumentError, CursorError) as exc:
            return envelope.error(exc.code, exc.message)
        try:
            return self._derived_call(req, state)
        except pages.PageFailure as exc:
            return envelope.error(exc.code, exc.message)
        except LockTimeout as exc:
            return envelope.error("history_timeout", exc.message)
        except StoreError as exc:
            if exc.code != "store_unavailable":  # the schema, the extension: not a retry
                return envelope.error("history_changed", exc.message)
            return envelope.error(
                "history_changed", f"the shared store could not be read ({exc.message}); call again"
            )

    def _derived_call(self, req: Request, state: CursorState | None) -> dict[str, Any]:
        """The page, from rows whose agent columns this code derived (see pg_derive)."""
        try:
            return self._call(req, state)
        except _Underived:
            if not self.rederive:
                return envelope.error(
                    "history_changed",
                    "the shared store's rows were indexed by another version of segue: "
                    f"run `segue store init {redact(self.store.url)}`, then call again",
                )
        self.store.rederive()
        try:
            return self._call(req, state)
        except _Underived:  # appended meanwhile by another version of segue
            return envelope.error(
                "history_changed", "another version of segue is writing this workspace; call again"
            )

    def _cursor(self, req: Request) -> CursorState | None:
        return request_state(
            req.cursor, workspace_id=self.store.workspace_id, action=req.action, bound=req.bound
        )

    def _call(self, req: Request, state: CursorState | None) -> dict[str, Any]:
        with self.store.snapshot() as snap:
            if snap.state.derived != fingerprint() and snap.state.next_pos > 0:
                raise _Underived
            return self._page(snap, req, state)

    def _page(self, snap: PgSnapshot, req: Request, state: CursorState | None) -> dict[str, Any]:
        now = snapshot_of(snap.state)
        if state is not None and (
            state.phase not in sql_pages.PHASES
            or not continuation_ok(cursor_snapshot(state), now)
        ):
            raise pages.PageFailure("stale_cursor", _STALE)
        workspace = self.store.workspace_id
        budget = Budget(self.max_bytes, self.max_rows)
        base = CursorState(
            ws=workspace,
            act=req.action,
            bind=binding(req.action, req.bound),
            **with_snapshot(now),
            ce=now.chat_size,
            phase="pg",
            pos=0,
        )
        ctx = pages.Ctx(self._layout, now, budget, req, base)
        sql = sql_pages.Sql(snap.conn, workspace, sql_pages.floor_pos(snap.conn, workspace))
        if state is not None and sql_pages.floor_pos(snap.conn, workspace, state.ce) >= state.ce:
            # a floor among the rows appended since the last page hides the rest (R26)
            if req.action == "read_item":
                raise pages.PageFailure("item_not_found", "a newer reset now hides this item")
            page = pages.Page([], None, pages.NOTE_FLOOR)
        else:
            page = sql_pages.ACTIONS[req.action](ctx, sql, state)
        result = envelope.success(
            req.action,
            pages.entries_key(req.action),
            entries=page.entries,
            next_cursor=encode(page.state) if page.state is not None else None,
            scanned_bytes=budget.bytes,
            scanned_rows=budget.rows,
            note=page.note,
        )
        return envelope.finish(result)


__all__ = ["PgSessionHistoryTool", "snapshot_of"]
