"""What a read of the PostgreSQL store sees: one REPEATABLE READ snapshot of a workspace
(its row and its lines, streamed through a server-side cursor), and each line as the JSONL
store would give it (``StoredLine``: the same source, offsets and parsed row)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from segue._context.floor import settled_marker
from segue._history.protocol import Entry, entry_of
from segue._history.scan import MAX_LINE, Source, StoredLine, parse_line
from segue.postgres._append import WorkspaceState
from segue.postgres._schema import translated

if TYPE_CHECKING:
    import psycopg

    from segue.postgres._store import PostgresStore

_FETCH = 256
_SELECT = "SELECT pos, off, raw, marker, window_id FROM segue_rows WHERE workspace = %s AND "


@dataclass(frozen=True)
class PgLine:
    """A stored line with the window it belongs to (what search answers carry)."""

    line: StoredLine
    pos: int
    window_id: str
    raw: bytes  # the whole line without its newline, also when ``line.raw`` is None



class PgSnapshot:
    """What :meth:`PostgresStore.snapshot` yields: the workspace row and its lines as of one
    instant. Lines stream in chunks through a server-side cursor."""

    def __init__(
        self,
        store: PostgresStore,
        conn: psycopg.Connection[Any],
        state: WorkspaceState,
        chat_off: int,
    ) -> None:
        self.store = store
        self.conn = conn
        self.state = state
        self.chat_off = chat_off

    def lines(
        self, where: str = "true", params: tuple[Any, ...] = (), order: str = "ASC"
    ) -> Iterator[PgLine]:
        """Lines matching ``where`` (a constant of this package, never user text)."""
        with translated("cannot read the transcript", self.store.url):
            cur = self.conn.cursor(name="segue_lines")
            try:
                cur.itersize = _FETCH
                sql = _SELECT + f"({where}) ORDER BY pos {order}"
                cur.execute(sql, (self.store.workspace_id, *params))
                while True:
                    chunk = cur.fetchmany(_FETCH)
                    if not chunk:
                        break
                    for pos, off, raw, marker, window in chunk:
                        data = bytes(raw)
                        line = _stored(
                            int(pos), int(off), data, bool(marker),
                            state=self.state, chat_off=self.chat_off,
                        )
                        yield PgLine(line, int(pos), str(window), data)
            finally:
                # Closed also on a broken connection (psycopg warns about a server cursor
                # left open); that close cannot reach the server and may fail: nothing to do.
                with contextlib.suppress(Exception):
                    cur.close()


def entries(
    snapshot: Callable[[], AbstractContextManager[PgSnapshot]], order: str
) -> Iterator[Entry]:
    """The store-neutral entries of one snapshot (``order``: "ASC" or "DESC"); a chat
    line's position follows the archive's, as in the JSONL store's history. Oldest first
    they are complete, as the JSONL store's are: a line past ``MAX_LINE`` (whose bytes a
    row of the table holds anyway) is read as a row too."""
    with snapshot() as snap:
        for found in snap.lines("true", (), order):
            line = found.line
            if line.raw is None and order == "ASC":
                row = parse_line(found.raw)
                line = StoredLine(line.source, line.offset, line.length, found.raw, row,
                                  settled_marker(found.raw, row, line.reset_marker))
            yield entry_of(line, snap.chat_off if line.source == "chat" else 0)


def chat_off(conn: psycopg.Connection[Any], workspace: str, state: WorkspaceState) -> int:
    got = conn.execute(
        "SELECT off FROM segue_rows WHERE workspace = %s AND pos = %s",
        (workspace, state.chat_pos),
    ).fetchone()
    return int(got[0]) if got is not None else state.next_off


def _stored(
    pos: int, off: int, raw: bytes, marker: bool, *, state: WorkspaceState, chat_off: int
) -> StoredLine:
    source: Source = "archive" if pos < state.chat_pos else "chat"
    offset = off if source == "archive" else off - chat_off
    if len(raw) > MAX_LINE:
        return StoredLine(source, offset, len(raw) + 1, None, None, marker)
    row = parse_line(raw)
    return StoredLine(source, offset, len(raw) + 1, raw, row, settled_marker(raw, row, marker))


__all__ = ["PgLine", "PgSnapshot", "chat_off", "entries"]
