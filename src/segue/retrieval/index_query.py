"""The candidate rows of a search in the history index: the trigram (FTS5) lookup of a
query's literal key plus the rows that must always be checked (R35, SPEC.md §7).

Its own small module so that ``segue history search`` reaches the index without the
session_history tool's pages (:mod:`segue.retrieval.index_pages` uses it too). Pure SQL over
an open connection: no transcript bytes are read here.
"""

from __future__ import annotations

import heapq
import re
import sqlite3
from collections.abc import Iterator
from typing import Any

_ASCII_RUN = re.compile(r"[\x20-\x7e]{3,}")


def fts_key(query: str) -> str | None:
    """Text every hit of ``query`` contains, ASCII case aside, for the trigram index: the
    longest run of printable ASCII (at least 3 characters). Under ``re.IGNORECASE`` an ASCII
    character matches only itself and its ASCII case partner, except K, S and I, which also
    match K (Kelvin), ſ, İ and ı: rows holding one of those are always candidates too
    (``risky``). None: no such run (the candidate rows are scanned)."""
    runs = _ASCII_RUN.findall(query)
    return max(runs, key=len) if runs else None


_MAX_TRIGRAMS = 16


def fts_match(key: str) -> str:
    """An FTS5 query for rows holding every trigram of ``key`` (at most 16 of them, spread
    over it: a superset of the rows holding ``key``, which is all a candidate must be)."""
    grams = sorted({key[i : i + 3] for i in range(len(key) - 2)}, key=key.find)
    if len(grams) > _MAX_TRIGRAMS:
        step = len(grams) / _MAX_TRIGRAMS
        grams = [grams[int(i * step)] for i in range(_MAX_TRIGRAMS)]
    return " AND ".join('"' + g.replace('"', '""') + '"' for g in grams)


def candidates(
    conn: sqlite3.Connection, query: str, lo: int, hi: int, *, newest: bool
) -> Iterator[int]:
    """Positions in ``(lo, hi)`` of the rows that may hold ``query`` (in the agent's or in
    people's text), newest or oldest first: the trigram matches of its key plus the risky
    rows; without a key, the rows whose stored text matches (``segue_find``, registered by
    the caller) or had to be changed to be stored."""
    order = "DESC" if newest else "ASC"
    key = fts_key(query)
    if key is None:
        sql = (
            "SELECT pos FROM rows WHERE pos > ? AND pos < ? AND (risky = 2 OR "  # noqa: S608
            f"segue_find(text) OR segue_find(vtext)) ORDER BY pos {order}"
        )
        yield from (int(r[0]) for r in rows_in_chunks(conn, sql, [lo, hi]))
        return
    fts = rows_in_chunks(
        conn,
        f"SELECT rowid FROM fts WHERE fts MATCH ? AND rowid > ? AND rowid < ? "  # noqa: S608
        f"ORDER BY rowid {order}",
        [fts_match(key), lo, hi],
    )
    risky = rows_in_chunks(
        conn,
        f"SELECT pos FROM rows WHERE risky > 0 AND pos > ? AND pos < ? ORDER BY pos {order}",  # noqa: S608
        [lo, hi],
    )
    last = None
    for (pos,) in heapq.merge(fts, risky, reverse=newest):
        if pos != last:
            yield int(pos)
        last = pos


def rows_in_chunks(
    conn: sqlite3.Connection, sql: str, args: list[Any]
) -> Iterator[tuple[Any, ...]]:
    """The rows of ``sql``, fetched 64 at a time (a generator stops early without reading
    the rest)."""
    cur = conn.execute(sql, args)
    while True:
        chunk = cur.fetchmany(64)
        if not chunk:
            return
        yield from chunk
