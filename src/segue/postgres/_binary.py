"""Values in PostgreSQL's binary forms, built here and sent as they are, so the server
parses no text for them: ``tsvector`` values (:func:`tsvector`) and a batch of
``segue_rows`` records as one array (:func:`records`, ``append_call``).

* A ``tsvector`` (what ``tsvector_recv`` reads): the number of lexemes (a 32-bit integer),
  then each lexeme as a NUL-terminated UTF-8 string followed by its number of positions (a
  16-bit integer; always 0: the columns keep no positions). The server sorts the lexemes
  when they do not come in its order. The text this starts from is the one the derived
  columns hold (``rows.Agent``): lexemes separated by single spaces, each bare (``words``)
  or in single quotes (``lit``), none holding a space, a quote, a backslash or a NUL
  (``rows.words_of``, ``lit.Lit``), so a lexeme's text is the lexeme itself and both forms
  store the same ``tsvector`` (tests/postgres/test_append_function.py).
* A record (``record_recv``): its number of columns, then each column's type oid and
  length (-1: NULL) and its bytes; an array of them (``array_recv``): one dimension, the
  record type's oid, the number of elements, each with its length. The record type is the
  table's own (:func:`row_type` reads its oid and its columns' order once).

* A ``COPY … (FORMAT binary)`` stream (:func:`copy_tuples`): :data:`COPY_HEAD`, then each
  row as its number of columns (16 bits) and each value's length (-1: NULL) and bytes, then
  :data:`COPY_TAIL`.

A value goes out as :class:`Binary`: binary, with no type of its own (the statement casts
it to the type it is).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from psycopg import pq
from psycopg.adapt import Dumper

if TYPE_CHECKING:
    import psycopg

__all__ = [
    "COPY_HEAD", "COPY_TAIL", "Binary", "RowType", "copy_tuples", "dumps", "records", "register",
    "row_type", "tsvector",
]

_I = struct.Struct("!i")
_H = struct.Struct("!h")
_Q = struct.Struct("!q")
_II = struct.Struct("!ii")
#: the end of a lexeme: its NUL, then its number of positions (0)
_END = "\x00\x00\x00"


class Binary(bytes):
    """A value in binary form, sent with no type (the statement's cast gives it one)."""

    __slots__ = ()


class _Dumper(Dumper):
    format = pq.Format.BINARY
    oid = 0  # unknown: the cast in the statement names the type

    def dump(self, obj: Any) -> bytes:
        return obj  # type: ignore[no-any-return]


def register(conn: psycopg.Connection[Any]) -> None:
    """Let ``conn`` send :class:`Binary` values (every connection the store opens)."""
    conn.adapters.register_dumper(Binary, _Dumper)


def tsvector(text: str) -> bytes:
    """The binary form of the ``tsvector`` whose text is ``text`` (module docstring)."""
    if not text:
        return _I.pack(0)
    n = text.count(" ") + 1
    quoted = text[0] == "'"
    text = text[1:-1].replace("' '", _END) if quoted else text.replace(" ", _END)
    return _I.pack(n) + (text + _END).encode()


def _text(v: Any) -> bytes:
    return v.encode()  # type: ignore[no-any-return]


def _bytea(v: Any) -> bytes:
    return bytes(v)


def _bool(v: Any) -> bytes:
    return b"\x01" if v else b"\x00"


#: each column type's oid (built in: the same on every server) and binary form
_TYPES: dict[str, tuple[int, Callable[[Any], bytes]]] = {
    "text": (25, _text),
    "bytea": (17, _bytea),
    "bigint": (20, _Q.pack),
    "integer": (23, _I.pack),
    "smallint": (21, _H.pack),
    "boolean": (16, _bool),
    "tsvector": (3614, tsvector),
}


class RowType:
    """A table's record type as :func:`records` writes it: its oid, and for each of its
    columns in the table's order, the position of its value in a row of values and how it
    is written."""

    __slots__ = ("columns", "oid")

    def __init__(self, oid: int, order: Sequence[str], columns: Sequence[str],
                 types: dict[str, str]) -> None:
        self.oid = oid
        where = {c: i for i, c in enumerate(columns)}
        self.columns = [(where[c], *_TYPES[types[c]]) for c in order]


def row_type(conn: psycopg.Connection[Any], table: str, columns: Sequence[str],
             types: dict[str, str]) -> RowType:
    """``table``'s record type, for rows whose values come in the order of ``columns``
    (each of type ``types[column]``); every column of the table must be among them."""
    got = conn.execute(
        "SELECT %s::regtype::oid, array_agg(attname::text ORDER BY attnum) FROM pg_attribute"
        " WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped",
        (table, table),
    ).fetchone()
    if got is None:
        raise LookupError(table)
    return RowType(int(got[0]), list(got[1]), columns, types)


def records(kind: RowType, rows: Iterable[Sequence[Any]]) -> Binary:
    """An array of ``kind`` records, one per row of values (module docstring)."""
    out: list[bytes] = []
    n = len(kind.columns)
    pack = _II.pack
    for row in rows:
        parts = [_I.pack(n)]
        for i, oid, dump in kind.columns:
            v = row[i]
            if v is None:
                parts.append(pack(oid, -1))
            else:
                data = dump(v)
                parts.append(pack(oid, len(data)))
                parts.append(data)
        rec = b"".join(parts)
        out.append(_I.pack(len(rec)))
        out.append(rec)
    if not out:
        return Binary(struct.pack("!iii", 0, 0, kind.oid))
    head = struct.pack("!iiiii", 1, 0, kind.oid, len(out) // 2, 1)
    return Binary(head + b"".join(out))


#: the start of a binary COPY stream (its signature, no flags, no extension) and its end
COPY_HEAD = b"PGCOPY\n\xff\r\n\x00" + bytes(8)
COPY_TAIL = b"\xff\xff"
_NULL = _I.pack(-1)


def dumps(columns: Sequence[str], types: dict[str, str]) -> list[Callable[[Any], bytes]]:
    """How each of ``columns`` (of type ``types[column]``) is written, in their order."""
    return [_TYPES[types[c]][1] for c in columns]


def copy_tuples(how: Sequence[Callable[[Any], bytes]], rows: Iterable[Sequence[Any]]) -> bytes:
    """Rows of values (each column written by ``how``) in binary COPY form."""
    out: list[bytes] = []
    n = _H.pack(len(how))
    length = _I.pack
    for row in rows:
        out.append(n)
        for dump, v in zip(how, row, strict=True):
            if v is None:
                out.append(_NULL)
            else:
                data = dump(v)
                out.append(length(len(data)))
                out.append(data)
    return b"".join(out)
