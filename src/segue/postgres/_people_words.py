"""``segue history search --words`` over the PostgreSQL store (R39, SPEC.md §8), through its
indexes: never a walk of every row in Python.

The same search as :mod:`segue._retrieval.people_words` (every item people see, every window,
no floor; BM25 over the whole transcript, the exact phrase highest, ties newest first), with
the same :class:`~segue._retrieval.people_words.Tally`, so the listing is the JSONL store's,
byte for byte. In one REPEATABLE READ snapshot:

* **Candidates.** An item whose people's text holds a query term holds it in ``words`` (the
  agent's terms) or in ``pwords`` (the people's terms ``words`` lacks), both GIN indexed
  (``rows.people_words``). Each candidate is read and analysed exactly as the walk analyses
  it; one that holds no query term after all (its agent's text did, its people's text does
  not) is only counted.
* **Statistics.** Every other item counts with the number of terms stored for it
  (``plen``), summed by the server. The lines whose number is not stored
  (``rows.PLEN_READ``: too long to parse when stored, or too many terms) are read and
  analysed like candidates.
* The hits are then read again by position, best first, in batches.

Where the columns cannot be trusted — rows derived by another version of segue, a stored
count that disagrees with its row, a line too long to parse that opens a window (the
``window_id`` column never saw it) — the search walks every row instead
(:func:`~segue._retrieval.people_words.words_search`): slower, never different.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from segue._context.boundaries import is_boundary, item_id
from segue._history.scan import MAX_LINE, parse_line
from segue._retrieval.people_words import Tally, batches, hit, wanted_terms
from segue._retrieval.people_words import words_search as walked
from segue._views.project import display
from segue._views.windows import Hit, Item, walk
from segue.postgres._derive import fingerprint
from segue.postgres._rows import PLEN_READ
from segue.postgres._schema import translated
from segue.postgres._snapshot import PgSnapshot
from segue.postgres._store import PostgresStore
from segue.postgres._words import tokens, tsquery

_FETCH = 256
#: every item people see, counted by the server from the stored numbers of terms
_COUNTED = (
    "SELECT count(*), coalesce(sum(plen), 0) FROM segue_rows"
    " WHERE workspace = %(ws)s AND plen >= 0"
)
#: what is read and analysed: the items holding a query term by either column, and the lines
#: whose number of terms is not stored
_CANDIDATES = (
    "SELECT pos, plen, raw FROM segue_rows WHERE workspace = %(ws)s AND plen IS NOT NULL"
    " AND (words @@ %(q)s::tsquery OR pwords @@ %(q)s::tsquery OR plen < 0)"
    " ORDER BY pos"
)
_HITS = (
    "SELECT pos, raw, window_id FROM segue_rows WHERE workspace = %s AND pos = ANY(%s::bigint[])"
)
# ``plen < 0``: rows.PLEN_READ, spelled as the partial index segue_rows_pread is, so it serves


class _Walk(Exception):
    """The stored columns cannot answer this search: walk every row."""


def search_words(store: PostgresStore, query: str, *, context: int = 60) -> Iterator[Hit]:
    """The ranked hits of ``query`` (see the module docstring); UsageError at once for a
    query without words."""
    wanted = wanted_terms(query)
    return _search(store, query, wanted, context)


def _search(store: PostgresStore, query: str, wanted: list[str], context: int) -> Iterator[Hit]:
    with store.snapshot() as snap:
        try:
            tally = _tally(snap, query, wanted)
        except _Walk:
            tally = None
        if tally is not None:
            yield from _listing(snap, tally, query, context)
            return
    yield from walked(store.entries, query, context=context)


def _tally(snap: PgSnapshot, query: str, wanted: list[str]) -> Tally:
    """Every item people see, counted: the candidates read and analysed, the others by their
    stored number of terms."""
    if snap.state.next_pos and snap.state.derived != fingerprint():
        raise _Walk("rows derived by another version")
    ws = snap.store.workspace_id
    tally = Tally(query, wanted)
    with translated("cannot search the transcript", snap.store.url):
        got = snap.conn.execute(_COUNTED, {"ws": ws}).fetchone()
        docs, length = (int(got[0]), int(got[1])) if got is not None else (0, 0)
        args = {"ws": ws, "q": tsquery(tokens(query))}
        for pos, plen, raw in _rows(snap, _CANDIDATES, args):
            data = bytes(raw)
            row = parse_line(data)  # whole, however long: as every_row reads it
            if plen == PLEN_READ:
                if row is None:
                    continue
                if len(data) > MAX_LINE and is_boundary(row):
                    raise _Walk(f"a line too long to parse when stored opens a window at {pos}")
                for event in walk([row]):
                    if isinstance(event, Item):
                        tally.item(pos, event.text, 0, (pos, pos + 1))
                continue
            if row is None:
                raise _Walk(f"row at {pos} no longer parses")
            n = tally.item(pos, display(row).text, 0, (pos, pos + 1))
            if n != plen:
                raise _Walk(f"row at {pos} has other terms than stored")
            docs, length = docs - 1, length - n
    tally.others(docs, length)
    return tally


def _rows(snap: PgSnapshot, sql: str, args: dict[str, Any]) -> Iterator[tuple[Any, ...]]:
    """The rows of ``sql`` through a server-side cursor, in chunks."""
    cur = snap.conn.cursor(name="segue_people_words")
    try:
        cur.execute(sql, args)
        while chunk := cur.fetchmany(_FETCH):
            yield from chunk
    finally:
        cur.close()


def _listing(snap: PgSnapshot, tally: Tally, query: str, context: int) -> Iterator[Hit]:
    """The hits, best first, read again by position, a batch at a time
    (:func:`~segue._retrieval.people_words.batches`)."""
    at = tally.at
    for batch in batches(tally):
        with translated("cannot search the transcript", snap.store.url):
            found = {
                int(pos): (bytes(raw), str(window))
                for pos, raw, window in snap.conn.execute(
                    _HITS, (snap.store.workspace_id, [at[h] for h in batch])
                )
            }
        for h in batch:
            data, window = found[at[h]]
            row = parse_line(data)
            if row is None:  # the snapshot holds it still: it parsed a moment ago
                continue
            item = Item(item_id(row), window, row, display(row))
            yield hit(item, query, tally.matches(h), context)
