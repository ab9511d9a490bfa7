"""Bulk transfer of a workspace's lines in and out of PostgreSQL (``history migrate``, large
batches): one binary ``COPY`` each way, streamed.

In: :func:`copy_in` writes prepared lines (``rows.Prepared``) through one ``COPY … FROM STDIN
(FORMAT binary)``, built here (:mod:`segue.postgres._binary`: the server parses no text,
not even a ``tsvector``'s); the caller derives the next chunk while the server stores the
last one.
:func:`chunks` is the pure part of a load: it cuts a stream of ``(source, raw)`` lines into
prepared chunks at their final positions and offsets, and finds where ``chat`` starts.

Out: :func:`raw_lines` reads ``(source, offset, sequence, raw)`` in order through one
``COPY (SELECT …) TO STDOUT (FORMAT binary)``, without parsing a row: what a byte-exact copy
and its checks need (offsets contiguous, sequences strictly increasing: :class:`LineCheck`).

:func:`fast_toast` makes the transaction compress long values with lz4 where the server has
it (a setting of this transaction only: nothing outlives it, so PgBouncer's transaction mode
is fine); values compressed either way read alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from segue._history.scan import Source
from segue.postgres import _lexicon as lexicon
from segue.postgres._binary import COPY_HEAD, COPY_TAIL, copy_tuples, dumps
from segue.postgres._derive import COLUMNS, values
from segue.postgres._rows import ROOT_POS, Prepared, prepare

if TYPE_CHECKING:
    import psycopg

#: lines derived and sent per chunk
CHUNK = 512
#: the columns a copy writes, in the order of :func:`row_values`
COPY_COLUMNS = (
    "workspace", "pos", "off", "raw", "seq", "item", "marker", "window_id", "body", *COLUMNS,
)
#: each column's type in ``segue_rows`` (tests/postgres/test_append_function.py checks it
#: against the catalog, so a column added without it fails there)
COLUMN_TYPES = {
    "workspace": "text", "pos": "bigint", "off": "bigint", "raw": "bytea", "seq": "bigint",
    "item": "text", "marker": "boolean", "window_id": "text", "body": "text",
    "kind": "smallint", "length": "integer", "win": "bigint", "wid": "bytea", "wkind": "text",
    "aid": "bytea", "rid": "bytea", "role": "text", "ts": "bigint", "tools": "text",
    "abody": "text", "risky": "boolean", "words": "tsvector", "wlen": "integer", "mach": "boolean",
    "lit": "tsvector", "longtok": "boolean", "plen": "integer", "pwords": "tsvector",
}
#: lz4 for this transaction's new long values when the server was built with it
FAST_TOAST = (
    "SELECT set_config('default_toast_compression',"
    " CASE WHEN 'lz4' = ANY(enumvals) THEN 'lz4' ELSE setting END, true)"
    " FROM pg_settings WHERE name = 'default_toast_compression'"
)


def row_values(workspace: str | None, p: Prepared) -> tuple[Any, ...]:
    """A prepared line's values in the order of :data:`COPY_COLUMNS`."""
    return (workspace, p.pos, p.off, p.raw, p.seq, p.item, p.marker, p.window_id, p.body,
            *values(p.agent))


def fast_toast(conn: psycopg.Connection[Any]) -> None:
    conn.execute(FAST_TOAST)


def copy_in(
    conn: psycopg.Connection[Any], workspace: str, chunks: Iterable[Iterable[Prepared]]
) -> int:
    """Store every prepared line of ``chunks`` in one binary COPY (each chunk written as one
    block, ``tsvector`` values in their binary form: :mod:`segue.postgres._binary`), and
    their literal tokens in the vocabulary (each once); the number stored."""
    n = 0
    terms: set[str] = set()
    how = dumps(COPY_COLUMNS, COLUMN_TYPES)
    with conn.cursor() as cur, cur.copy(
        "COPY segue_rows (" + ", ".join(COPY_COLUMNS) + ") FROM STDIN (FORMAT binary)"
    ) as copy:
        copy.write(COPY_HEAD)
        for chunk in chunks:
            lines = list(chunk)
            copy.write(copy_tuples(how, [row_values(workspace, p) for p in lines]))
            for p in lines:
                terms.update(p.agent.lex)
            n += len(lines)
        copy.write(COPY_TAIL)
    lexicon.add(conn, workspace, terms)
    return n


@dataclass
class Loaded:
    """Where a load stands: the next position and offset, both windows open at the end, and
    the position ``chat`` starts at (None while only archive lines came)."""

    pos: int
    off: int
    window_id: str
    win: int = ROOT_POS
    chat_pos: int | None = None
    _pending: list[bytes] = field(default_factory=list)


def chunks(
    lines: Iterable[tuple[Source, bytes]], at: Loaded, *, size: int = CHUNK
) -> Iterator[list[Prepared]]:
    """The prepared chunks of ``lines`` (archive lines first, then chat lines), advancing
    ``at``; the first chat line's position becomes ``at.chat_pos``."""

    def flush() -> list[Prepared]:
        prepared, at.window_id, at.win = prepare(
            at._pending, pos=at.pos, off=at.off, window_id=at.window_id, win=at.win
        )
        at.pos += len(prepared)
        at.off += sum(len(raw) + 1 for raw in at._pending)
        at._pending.clear()
        return prepared

    for source, raw in lines:
        if source == "chat" and at.chat_pos is None:
            if at._pending:
                yield flush()
            at.chat_pos = at.pos
        at._pending.append(raw)
        if len(at._pending) >= size:
            yield flush()
    if at._pending:
        yield flush()


def raw_lines(
    conn: psycopg.Connection[Any], workspace: str, chat_pos: int
) -> Iterator[tuple[Source, int, int | None, bytes]]:
    """Every line of ``workspace`` oldest first as ``(source, offset in its file, sequence,
    exact bytes)``, in the caller's transaction (its snapshot)."""
    chat_off: int | None = None
    with conn.cursor() as cur, cur.copy(
        "COPY (SELECT pos, off, seq, raw FROM segue_rows WHERE workspace = %s ORDER BY pos)"
        " TO STDOUT (FORMAT binary)",
        (workspace,),
    ) as copy:
        copy.set_types(["int8", "int8", "int8", "bytea"])
        for pos, off, seq, raw in copy.rows():
            if pos < chat_pos:
                yield "archive", off, seq, raw
                continue
            if chat_off is None:
                chat_off = off
            yield "chat", off - chat_off, seq, raw


@dataclass
class LineCheck:
    """The damage ``history verify`` reports, checked line by line on a stream of
    ``(source, offset, sequence, raw)``: offsets contiguous within each file, sequences
    strictly increasing, the last one below the workspace's next sequence."""

    problems: list[str] = field(default_factory=list)
    last: int | None = None
    _expected: dict[str, int] = field(default_factory=lambda: {"archive": 0, "chat": 0})

    def add(self, source: Source, offset: int, seq: int | None, raw: bytes) -> None:
        if offset != self._expected[source]:
            self.problems.append(f"{source} offset {offset}: expected {self._expected[source]}")
        self._expected[source] = offset + len(raw) + 1
        if seq is None:
            return
        if self.last is not None and seq <= self.last:
            self.problems.append(f"historySequence {seq} after {self.last} (out of order)")
        self.last = seq if self.last is None else max(self.last, seq)

    def finish(self, next_sequence: int) -> list[str]:
        if self.last is not None and self.last >= next_sequence:
            self.problems.append(
                f"historySequence {self.last} is not below the workspace's next sequence "
                f"{next_sequence}"
            )
        return self.problems


__all__ = [
    "CHUNK", "COLUMN_TYPES", "COPY_COLUMNS", "FAST_TOAST", "LineCheck", "Loaded", "chunks",
    "copy_in", "fast_toast", "raw_lines", "row_values",
]
