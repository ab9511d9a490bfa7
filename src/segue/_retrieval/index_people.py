"""``segue history search`` and ``segue history verify`` over the history index (R35). I/O.

People search the whole transcript (no floor, hidden rows included, SPEC.md §5): the index
tokenizes each row's people's text (:mod:`segue._views.project`) with the agent's, so its
literal candidates (:mod:`segue._retrieval.index_query`) cover both. Read-only: the index is
opened ``mode=ro`` and never caught up or rebuilt here (read-only commands create and change
nothing under the home); bytes appended since it was last caught up are scanned directly.
No store lock is taken: the trusted snapshot is checked again at the end, and within one
epoch the indexed bytes cannot change (index_file.py), so a changed snapshot only means
"answer from the scan".
"""

from __future__ import annotations

import heapq
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass

from segue._context.boundaries import is_boundary, is_compaction_boundary, item_id
from segue._context.boundaries import window_id_of_boundary as boundary_window
from segue._history.scan import StoredLine, parse_line, scan_forward
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
from segue._retrieval.index_query import candidates, rows_in_chunks
from segue._retrieval.reader import Budget, ForwardReader, FwdState, Segment, read_span
from segue._retrieval.snapshot import Snapshot, take
from segue._views.project import display, is_hidden
from segue._views.windows import Hit, Item, snippet
from segue._workspace import Layout

_UNBOUNDED = 1 << 62


def same_snapshot(then: Snapshot, now: Snapshot) -> bool:
    """Whether ``now`` still vouches for what a read-only search read in ``then``."""
    return (
        now.trusted
        and now.epoch == then.epoch
        and now.archive == then.archive
        and (now.chat is None) == (then.chat is None)
        and (then.chat is None or (now.chat is not None and now.chat.ino == then.chat.ino))
        and now.chat_size >= then.chat_size
    )


def search_people(layout: Layout, query: str, *, context: int = 60) -> list[Hit] | None:
    """Every item whose displayed text holds ``query`` (literal, case-insensitive), in
    transcript order, exactly as :func:`segue._views.windows.search` finds them; None when the
    index cannot be trusted now (the caller scans)."""
    snap = take(layout)
    try:
        conn = open_index(layout, write=False)
    except IndexUnusable:
        return None
    try:
        meta = trusted_meta(conn, layout, snap)
        hits = list(_indexed_hits(conn, layout, snap, query, context))
        hits.extend(_tail_hits(layout, meta, snap, query, context))
    except (IndexUnusable, sqlite3.Error):
        return None
    finally:
        conn.close()
    return hits if same_snapshot(snap, take(layout)) else None


def _pattern(query: str) -> re.Pattern[str]:
    return re.compile(re.escape(query), re.IGNORECASE)


def _hit(row: Row, window: str, pattern: re.Pattern[str], context: int) -> Hit | None:
    view = display(row)
    matches = list(pattern.finditer(view.text))
    if not matches:
        return None
    first = matches[0]
    item = Item(item_id(row), window, row, view)
    return Hit(item, len(matches), snippet(view.text, first.start(), first.end(), context))


def _indexed_hits(
    conn: sqlite3.Connection, layout: Layout, snap: Snapshot, query: str, context: int
) -> Iterator[Hit]:
    """The hits among the indexed rows: each candidate (every shown row when no piece of the
    query narrows the search) re-read, checked against its digest and matched."""
    pattern = _pattern(query)
    found = candidates(conn, query, -2, 1 << 62, newest=False)
    if found is None:
        found = (
            int(r[0])
            for r in rows_in_chunks(
                conn, f"SELECT pos FROM rows WHERE vkind != {VIEW_HIDDEN} ORDER BY pos", []  # noqa: S608
            )
        )
    extra = {u.pos: u for u, _data, _row in unparsed_items(conn, layout, snap)}
    last = -1
    for pos in heapq.merge(found, sorted(extra)):
        if pos == last:
            continue
        last = pos
        if pos in extra:
            row = read_row(layout, snap, pos, extra[pos].length)[1]
            if row is None:
                raise IndexUnusable(f"row at {pos} no longer parses")
            hit = _hit(row, extra[pos].window, pattern, context)
            if hit is not None:
                yield hit
            continue
        vkind, length, want, hwin = conn.execute(
            "SELECT vkind, len, digest, hwin FROM rows WHERE pos = ?", (pos,)
        ).fetchone()
        if vkind == VIEW_HIDDEN:
            continue
        data, row = read_row(layout, snap, pos, length)
        if want is None or digest(data) != bytes(want):
            raise IndexUnusable(f"row at {pos} differs from the index")
        if row is None:
            raise IndexUnusable(f"row at {pos} no longer parses")
        hit = _hit(row, id_str(hwin), pattern, context)
        if hit is not None:
            yield hit


@dataclass(frozen=True, slots=True)
class Unparsed:
    """A line too long for the index to parse that people see as an item: where it is, and
    its people's window."""

    pos: int
    length: int
    window: str


_UNPARSED = "SELECT pos, len, hwin FROM rows WHERE digest IS NULL ORDER BY pos"


def unparsed_items(
    conn: sqlite3.Connection, layout: Layout, snap: Snapshot
) -> Iterator[tuple[Unparsed, bytes, Row]]:
    """The lines the index could not parse (longer than it reads: it records them without a
    digest) that people see as items, read whole and parsed here, as the views read every
    line, one at a time: where each is, its bytes and its row. IndexUnusable when one is a
    boundary: the windows the index gives the rows after it are then not the views'."""
    for pos, size, hwin in rows_in_chunks(conn, _UNPARSED, []):
        data, row = read_row(layout, snap, int(pos), int(size))
        if row is None:
            continue
        if is_boundary(row):
            raise IndexUnusable(f"row at {pos} opens a window the index did not read")
        if not is_hidden(row):
            yield Unparsed(int(pos), int(size), id_str(hwin)), data, row


def read_row(layout: Layout, snap: Snapshot, pos: int, size: int) -> tuple[bytes, Row | None]:
    """One line at a global position, without its newline, and its row (None: it does not
    parse). IndexUnusable when the transcript no longer holds it."""
    a = snap.archive_size
    path, local = (layout.archive, pos) if pos < a else (layout.chat, pos - a)
    data = read_span(path, local, size)
    if data is None:
        raise IndexUnusable(f"row at {pos} is no longer in the transcript")
    data = data[:-1] if data.endswith(b"\n") else data
    return data, parse_line(data)


def _tail_hits(
    layout: Layout, meta: Meta, snap: Snapshot, query: str, context: int
) -> Iterator[Hit]:
    """The chat rows the index has not read yet that hold the query."""
    pattern = _pattern(query)
    for _line, row, window in tail_items(layout, meta, snap):
        hit = _hit(row, window, pattern, context)
        if hit is not None:
            yield hit


def tail_items(
    layout: Layout, meta: Meta, snap: Snapshot
) -> Iterator[tuple[StoredLine, Row, str]]:
    """The chat rows the index has not read yet that people see as items, walked as the
    views walk them (every line whole): each line, its row and its people's window."""
    window = meta.hwin
    for line in scan_forward(layout.chat, "chat", meta.chat_read, end=snap.chat_size,
                             max_line=_UNBOUNDED):
        row = line.row
        if row is None:
            continue
        if is_boundary(row):
            window = boundary_window(row)
            if not is_compaction_boundary(row):
                continue
        if not is_hidden(row):
            yield line, row, window


@dataclass(frozen=True)
class IndexCheck:
    """What ``segue history verify`` says about the index: ``state`` is ``absent``,
    ``untrusted`` (with the reason; it is rebuilt on next use) or ``checked``; ``mismatches``
    lists rows whose bytes differ from what the index recorded."""

    state: str
    reason: str = ""
    rows: int = 0
    mismatches: tuple[str, ...] = ()


def check_index(layout: Layout, max_listed: int = 5) -> IndexCheck:
    """Compare the index with the transcript: every indexed line's position, length and
    digest against the bytes on disk (read-only)."""
    snap = take(layout)
    try:
        conn = open_index(layout, write=False)
    except IndexUnusable as exc:
        return IndexCheck("absent" if str(exc) == "no index" else "untrusted", str(exc))
    try:
        meta = trusted_meta(conn, layout, snap)
        return _compare(conn, layout, meta, snap, max_listed)
    except IndexUnusable as exc:
        return IndexCheck("untrusted", str(exc))
    except sqlite3.Error as exc:
        return IndexCheck("untrusted", f"index unreadable: {exc}")
    finally:
        conn.close()


def _compare(
    conn: sqlite3.Connection, layout: Layout, meta: Meta, snap: Snapshot, max_listed: int
) -> IndexCheck:
    a = snap.archive_size
    segs = [Segment(layout.archive, 0, a), Segment(layout.chat, a, a + meta.chat_read)]
    reader = ForwardReader(segs, FwdState(0), Budget(_UNBOUNDED, _UNBOUNDED))
    indexed = conn.execute("SELECT pos, len, digest FROM rows ORDER BY pos")
    problems: list[str] = []
    count = 0
    for line in reader:
        got = indexed.fetchone()
        count += 1
        raw_digest = digest(line.raw) if line.raw is not None else None
        want = (line.start, line.end - line.start, raw_digest)
        have = None
        if got is not None:
            have = (got[0], got[1], bytes(got[2]) if got[2] is not None else None)
        if have != want:
            problems.append(f"line at byte {line.start}: the index records {have and have[:2]}")
    extra = indexed.fetchone()
    if extra is not None:
        problems.append(f"the index records a line at byte {extra[0]} the transcript lacks")
    listed = tuple(problems[:max_listed])
    if len(problems) > max_listed:
        listed += (f"... and {len(problems) - max_listed} more",)
    return IndexCheck("checked", rows=count, mismatches=listed)
