"""``segue history search --words`` over the history index (R35, R39). I/O.

The same search as :mod:`segue._retrieval.people_words` (every item people see, every window,
no floor; BM25 over the whole transcript, the exact phrase highest, a share of the hit on the
line just before (the line ending where its own starts), ties newest first), with
the same :class:`~segue._retrieval.people_words.Tally`, so the listing is the scan's, but
without reading every row:

* **Candidates.** An item whose people's text holds a query term is in ``words`` (the agent's
  terms) or in ``pwords`` (the people's terms ``words`` lacks), both stored as
  :func:`~segue._retrieval.ranking.index_query` asks (index_ddl.py). Each candidate is read
  again, checked against its digest and analysed exactly as the scan analyses it; a
  candidate that holds no query term after all (its agent's text did, its people's text does
  not) is only counted.
* **Statistics.** Every other item counts with the number of terms the index recorded for
  it (``rows.plen``). The rows whose number is not recorded (a text SQLite could not hold as
  it is, a line too long for the index to parse) are read and analysed like candidates.
* Bytes appended since the index last caught up are walked as the views walk them.

Read-only, like :mod:`segue._retrieval.index_people`: the index is opened ``mode=ro``, never
caught up; None when it cannot be trusted now (the caller scans). Memory stays bounded: a hit
is a few numbers until it is printed, when it is read once more, best first.
"""

from __future__ import annotations

import sqlite3
from array import array
from collections.abc import Iterator

from segue._context.boundaries import item_id
from segue._messages import Row
from segue._retrieval.index_file import (
    VIEW_HIDDEN,
    IndexUnusable,
    Meta,
    digest,
    id_str,
    open_index,
    trusted_meta,
)
from segue._retrieval.index_people import (
    read_row,
    same_snapshot,
    tail_items,
    unparsed_items,
)
from segue._retrieval.index_query import rows_in_chunks
from segue._retrieval.people_words import Tally, hit, wanted_terms
from segue._retrieval.ranking import index_query
from segue._retrieval.snapshot import Snapshot, take
from segue._views.project import display, is_hidden
from segue._views.windows import Hit, Item
from segue._workspace import Layout

_CANDIDATES = f"""
SELECT r.pos, r.len, r.digest, r.hwin, r.plen FROM rows r WHERE r.pos IN (
    SELECT rowid FROM words WHERE words MATCH ?1
    UNION SELECT rowid FROM pwords WHERE pwords MATCH ?1
    UNION SELECT pos FROM rows WHERE vkind != {VIEW_HIDDEN} AND plen IS NULL
) AND r.vkind != {VIEW_HIDDEN} ORDER BY r.pos
"""  # noqa: S608 (constants of this package)
_COUNTED = (
    f"SELECT count(*), total(plen) FROM rows WHERE vkind != {VIEW_HIDDEN} "  # noqa: S608
    "AND digest IS NOT NULL"
)


class _Places:
    """Where each hit's line is, to read it again, in flat arrays beside the tally's (hit
    ``h`` is the ``h``-th kept): its length, digest and people's window (an index into the
    distinct window ids)."""

    def __init__(self) -> None:
        self.length = array("q")
        self.digests = bytearray()
        self.window = array("l")
        self.windows: dict[str, int] = {}
        self.names: list[str] = []

    def add(self, length: int, line_digest: bytes, window: str) -> None:
        slot = self.windows.get(window)
        if slot is None:
            slot = self.windows[window] = len(self.names)
            self.names.append(window)
        self.length.append(length)
        self.digests += line_digest
        self.window.append(slot)

    def digest(self, h: int) -> bytes:
        return bytes(self.digests[h * _DIGEST:(h + 1) * _DIGEST])


_DIGEST = 16  # bytes of index_file.digest


def search_words(layout: Layout, query: str, *, context: int = 60) -> Iterator[Hit] | None:
    """The ranked hits of ``query`` (see the module docstring); None when the index cannot
    answer now. UsageError at once for a query without words."""
    wanted = wanted_terms(query)
    match = index_query(query)
    snap = take(layout)
    try:
        conn = open_index(layout, write=False)
    except IndexUnusable:
        return None
    try:
        meta = trusted_meta(conn, layout, snap)
        tally = Tally(query, wanted)
        places = _Places()
        _indexed(conn, layout, snap, match or "", tally=tally, places=places)
        _tail(layout, meta, snap, tally, places)
    except (IndexUnusable, sqlite3.Error):
        return None
    finally:
        conn.close()
    if not same_snapshot(snap, take(layout)):
        return None
    return _listing(layout, snap, query, tally=tally, places=places, context=context)


def _indexed(
    conn: sqlite3.Connection,
    layout: Layout,
    snap: Snapshot,
    match: str,
    *,
    tally: Tally,
    places: _Places,
) -> None:
    """Count every indexed item people see: the candidates (and the rows without a recorded
    number of terms) read and analysed, the others by ``plen``."""
    docs, length = conn.execute(_COUNTED).fetchone()
    docs, length = int(docs), int(length)
    for pos, size, want, hwin, plen in rows_in_chunks(conn, _CANDIDATES, [match]):
        if want is None:
            continue  # an unparsed line: read below, with the others (not in ``docs``)
        data, row = read_row(layout, snap, int(pos), int(size))
        if digest(data) != bytes(want):
            raise IndexUnusable(f"row at {pos} differs from the index")
        if row is None or is_hidden(row):
            raise IndexUnusable(f"row at {pos} is no longer one people see")
        n = _count(tally, places, int(pos), row, (int(size), bytes(want), id_str(hwin)))
        if plen is not None:
            if int(plen) != n:
                raise IndexUnusable(f"row at {pos} has other terms than the index records")
            docs, length = docs - 1, length - n
        else:
            docs -= 1
    for unparsed, data, row in unparsed_items(conn, layout, snap):
        _count(tally, places, unparsed.pos, row, (unparsed.length, digest(data), unparsed.window))
    tally.others(docs, length)


def _count(
    tally: Tally, places: _Places, pos: int, row: Row, place: tuple[int, bytes, str]
) -> int:
    """Count one item people see; keep where it is, ``(length, digest, window)``, when it
    is a hit."""
    before = len(tally.at)
    n = tally.item(pos, display(row).text, 0, (pos, pos + place[0]))
    if len(tally.at) > before:
        places.add(*place)
    return n


def _tail(layout: Layout, meta: Meta, snap: Snapshot, tally: Tally, places: _Places) -> None:
    """The chat rows the index has not read yet, walked as the views walk them."""
    a = snap.archive_size
    for line, row, window in tail_items(layout, meta, snap):
        raw = line.raw if line.raw is not None else b""
        _count(tally, places, a + line.offset, row, (line.length, digest(raw), window))


def _listing(
    layout: Layout,
    snap: Snapshot,
    query: str,
    *,
    tally: Tally,
    places: _Places,
    context: int,
) -> Iterator[Hit]:
    """The hits, best first, each read once more (one that changed since is left out, as
    the scan leaves out an item rewritten since it was ranked)."""
    for h in tally.order():
        try:
            data, row = read_row(layout, snap, tally.at[h], places.length[h])
        except IndexUnusable:
            continue
        if row is None or digest(data) != places.digest(h):
            continue
        item = Item(item_id(row), places.names[places.window[h]], row, display(row))
        yield hit(item, query, tally.matches(h), context)
