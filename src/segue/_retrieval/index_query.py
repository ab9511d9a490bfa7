"""The candidate rows of a literal search in the history index: the rows whose tokens hold
every piece of the query (:mod:`segue._retrieval.index_literal`) plus the rows that must
always be checked (R35, SPEC.md §7).

Its own small module so that ``segue history search`` reaches the index without the
session_history tool's pages (:mod:`segue._retrieval.index_pages` uses it too). Pure SQL over
an open connection: no transcript bytes are read here.

Each piece is resolved to the ``lex`` tokens it picks out (an exact token, a range of
tokens for a prefix, the trigram index ``lexgrams`` for a suffix or a substring); a piece
picking out more than :data:`MAX_TERMS` tokens narrows too little to be worth its lookup and
is left out, and a piece picking out none means no row but a risky one can hold the query.
The candidates are the ``lit`` rows holding one token of every piece kept. When no piece can
be kept (a query of one or two characters, or only of very common ones), :func:`candidates`
says so and the caller reads the rows in order, within R24's bounds.
"""

from __future__ import annotations

import heapq
import sqlite3
from collections.abc import Iterator
from typing import Any

from segue._retrieval.index_ddl import LEX_MAX
from segue._retrieval.index_literal import Need, Piece, pieces

#: tokens one piece may stand for in the ``lit`` query
MAX_TERMS = 256
#: rows the narrowest piece alone may pick out to be used alone (each extra candidate costs
#: one re-read of its line, about 20 µs)
PROBE_ROWS = 16
#: trigram matches examined for one suffix or substring piece before it counts as too common
_MAX_GRAM_ROWS = 8 * MAX_TERMS


def _terms(conn: sqlite3.Connection, piece: Piece) -> list[str] | None:
    """The ``lex`` tokens the piece picks out, or None when there are too many to use."""
    text = piece.text
    if len(text) > LEX_MAX:
        # the vocabulary keeps such a token only as windows: a row holding it holds a long
        # token, so it is one of the risky rows read for a long piece (see candidates)
        return []
    if piece.need is Need.EXACT:
        got = conn.execute("SELECT term FROM lex WHERE term = ?", (text,)).fetchall()
        return [str(r[0]) for r in got]
    if piece.need is Need.PREFIX:
        upper = text[:-1] + chr(ord(text[-1]) + 1)  # ASCII letters and digits: no overflow
        got = conn.execute(
            "SELECT term FROM lex WHERE term >= ? AND term < ? LIMIT ?",
            (text, upper, MAX_TERMS + 1),
        ).fetchall()
        return [str(r[0]) for r in got] if len(got) <= MAX_TERMS else None
    if len(text) < 3:  # no trigram to look up
        return None
    grams = " AND ".join(f'"{text[i : i + 3]}"' for i in range(len(text) - 2))
    rows = conn.execute(
        "SELECT l.term FROM lexgrams g JOIN lex l ON l.id = g.rowid "
        "WHERE lexgrams MATCH ? LIMIT ?",
        (grams, _MAX_GRAM_ROWS + 1),
    ).fetchall()
    if len(rows) > _MAX_GRAM_ROWS:
        return None
    if piece.need is Need.SUFFIX:
        found = [str(r[0]) for r in rows if str(r[0]).endswith(text)]
    else:
        found = [str(r[0]) for r in rows if text in str(r[0])]
    return found if len(found) <= MAX_TERMS else None


def _groups(conn: sqlite3.Connection, query: str) -> list[list[str]] | None:
    """Per piece kept, the ``lex`` tokens one of which a non-risky candidate holds: [] when
    a piece picks out none (no non-risky row can hold the query), None when no piece
    narrows the search (every row is a candidate)."""
    groups: list[list[str]] = []
    for piece in dict.fromkeys(pieces(query)):
        terms = _terms(conn, piece)
        if terms is None:
            continue
        if not terms:
            return []
        groups.append(terms)
    return groups or None


def _and(groups: list[list[str]]) -> str:
    return " AND ".join("(" + " OR ".join(f'"{t}"' for t in terms) + ")" for terms in groups)


def _narrowest(conn: sqlite3.Connection, groups: list[list[str]], lo: int, hi: int) -> str:
    """The ``lit`` query to read candidates with: every group's, unless the group of fewest
    tokens alone picks out at most :data:`PROBE_ROWS` rows in ``(lo, hi)`` — then that
    group's. Either is a superset of the rows holding the query (each candidate is verified
    on its re-read text), and the AND of a rare piece with one of many tokens costs FTS5 a
    walk of each token's list: 0.64 of 0.66 ms for ``zebracorn-4471`` at 1 GB, where the
    rare piece alone takes 0.02 ms."""
    whole = _and(groups)
    if len(groups) < 2:
        return whole
    probe = _and([min(groups, key=len)])
    got = conn.execute(
        "SELECT rowid FROM lit WHERE lit MATCH ? AND rowid > ? AND rowid < ? LIMIT ?",
        (probe, lo, hi, PROBE_ROWS + 1),
    ).fetchall()
    return probe if len(got) <= PROBE_ROWS else whole


def candidates(
    conn: sqlite3.Connection, query: str, lo: int, hi: int, *, newest: bool
) -> Iterator[int] | None:
    """Positions in ``(lo, hi)`` of the rows that may hold ``query`` (in the agent's or in
    people's text), newest or oldest first: the ``lit`` rows holding every piece kept, and
    the risky rows. None: no piece narrows the search; every row is a candidate."""
    groups = _groups(conn, query)
    if groups is None:
        return None
    match = _narrowest(conn, groups, lo, hi) if groups else ""  # "": only risky rows
    # a row whose only risk is a long token is a candidate only for a piece longer than its
    # windows cover (index_words.long_token_windows)
    long_piece = any(
        len(p.text) > (LEX_MAX if p.need is Need.EXACT else LEX_MAX // 2)
        for p in pieces(query)
    )
    return _merged(conn, match, lo, hi, newest=newest, long_piece=long_piece)


def _merged(
    conn: sqlite3.Connection, match: str, lo: int, hi: int, *, newest: bool,
    long_piece: bool = True,
) -> Iterator[int]:
    order = "DESC" if newest else "ASC"
    # the index of exactly those rows: through ``rows_risky``, a query without a long piece
    # would visit every long-token row to drop it (13 ms a call at 1 GB of agent rows)
    which = (
        "rows INDEXED BY rows_risky WHERE risky > 0" if long_piece
        else "rows INDEXED BY rows_risky_text WHERE risky > 0 AND risky < 3"
    )
    risky = rows_in_chunks(
        conn,
        f"SELECT pos FROM {which} AND pos > ? AND pos < ? ORDER BY pos {order}",  # noqa: S608
        [lo, hi],
    )
    if not match:
        yield from (int(r[0]) for r in risky)
        return
    found = rows_in_chunks(
        conn,
        f"SELECT rowid FROM lit WHERE lit MATCH ? AND rowid > ? AND rowid < ? "  # noqa: S608
        f"ORDER BY rowid {order}",
        [match, lo, hi],
    )
    last = None
    for (pos,) in heapq.merge(found, risky, reverse=newest):
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
