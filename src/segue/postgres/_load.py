"""Copying lines byte for byte into an empty PostgreSQL workspace (``history migrate``): one
transaction and one COPY, streamed (each chunk is derived while the server stores the last),
then the workspace's state and fresh planner statistics."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from segue._errors import StoreError
from segue._history.receipt import new_epoch
from segue._history.scan import Source
from segue.postgres._bulk import Loaded, chunks, fast_toast
from segue.postgres._bulk import copy_in as _copy_in
from segue.postgres._derive import fingerprint
from segue.postgres._schema import redact, translated

if TYPE_CHECKING:
    from segue.postgres._store import PostgresStore


def load_lines(
    store: PostgresStore, lines: Iterable[tuple[Source, bytes]], next_sequence: int
) -> None:
    """Archive lines first, then chat lines, into ``store``'s empty workspace, and the
    sequence floor ``next_sequence`` (raised to the workspace's own if that is higher)."""
    with store._mutation("cannot load the transcript") as (conn, state):
        if store._has_rows(conn):
            raise StoreError(
                f"workspace {store.workspace_id} already has history in "
                f"{redact(store.url)}; migrate into an empty workspace",
                code="target_not_empty",
            )
        fast_toast(conn)
        at = Loaded(state.next_pos, state.next_off, state.window_id, state.win)
        _copy_in(conn, store.workspace_id, chunks(lines, at))
        conn.execute(
            "UPDATE segue_workspaces SET epoch = %s, next_sequence = %s, next_pos = %s,"
            " next_off = %s, chat_pos = %s, window_id = %s, agent_win = %s, derived = %s"
            " WHERE workspace = %s",
            (
                new_epoch(),
                max(next_sequence, state.next_sequence),
                at.pos,
                at.off,
                at.chat_pos if at.chat_pos is not None else at.pos,
                at.window_id,
                at.win,
                fingerprint(),
                store.workspace_id,
            ),
        )
        store._notify(conn)
    # A bulk load changes the table's statistics at once: refresh them so the planner
    # uses the search index right away instead of after autovacuum.
    with translated("cannot analyze the transcript table", store.url), \
            store._connection() as conn:
        conn.execute("ANALYZE segue_rows")
        conn.execute("ANALYZE segue_lex")
