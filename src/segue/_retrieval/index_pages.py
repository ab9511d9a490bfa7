"""``session_history`` answered from the history index (R35, R36). Runs with the store lock
held, inside the page of tool.py, after the index was checked and caught up
(:func:`open_for_call`).

What makes an indexed answer equal the scan's:

* the same rows: the index holds the scan's own classification of every line, and only rows
  above the newest floor are considered (the floor: the newest floor candidate the index
  knows; the bytes it has not read are checked first and, unless they are a torn tail
  without a reset key, the call scans instead);
* the same order and page breaks: newest (or oldest) first by position, a page ends at the
  limit or at the first entry that would not fit the 16 KiB result, exactly where the scan's
  pages end;
* the same text: every returned row is re-read from the transcript at its recorded offset,
  checked against its recorded length and digest, and classified again; any difference is
  :class:`IndexMismatch` (the call scans and the index is rebuilt).

The re-reads count against R24's budget (``scanned``); a page whose next row would pass it
ends there with a cursor. Index lookups do not count (R35).

SQL text is put together only from fixed fragments (orders, filters, column names); every
value is a bound parameter. Row kinds are written as literals, not parameters, so that SQLite
can use the partial indexes (``WHERE kind = 0``) of index_file.py.
"""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from segue._context.boundaries import ROOT_WINDOW_ID
from segue._context.floor import mentions_reset_key
from segue._retrieval import page_entries, pages, pages_read
from segue._retrieval.cursor import CursorState
from segue._retrieval.index_build import catch_up
from segue._retrieval.index_file import (
    KIND_ITEM,
    ROOT_POS,
    TOOL_SEP,
    IndexBehind,
    IndexUnusable,
    Meta,
    digest,
    floor_pos,
    id_bytes,
    id_str,
    open_index,
    storable,
    trusted_meta,
)
from segue._retrieval.index_query import candidates
from segue._retrieval.index_query import rows_in_chunks as _rows
from segue._retrieval.project import Kind, Seen, classify
from segue._retrieval.ranking import MACHINE_WEIGHT, NEIGHBOUR_SHARE, index_query
from segue._retrieval.reader import MAX_LINE, RawLine, read_span
from segue._retrieval.snapshot import Snapshot
from segue._workspace import Layout

_TOP = 1 << 62  # above every position
_BOTTOM = ROOT_POS - 1  # below every position, the root window's included


class IndexMismatch(Exception):
    """A row's bytes differ from what the index recorded: this call scans, and the index is
    rebuilt."""


@dataclass
class Ix:
    """One call's view of the index."""

    conn: sqlite3.Connection
    meta: Meta
    floor: int


def open_for_call(
    layout: Layout, snap: Snapshot, *, write: bool, deadline: float | None = None
) -> Ix:
    """Open, check and (with ``write``) catch up the index, until ``deadline`` at most (the
    rest on a later call), or raise :class:`IndexUnusable`. The caller holds the store lock
    and closes ``Ix.conn``."""
    conn = open_index(layout, write=write)
    try:
        meta = trusted_meta(conn, layout, snap)
        if write:
            meta = catch_up(conn, layout, meta, snap, deadline=deadline)
        _check_unread(layout, meta, snap)
        return Ix(conn, meta, floor_pos(conn))
    except sqlite3.Error as exc:
        conn.close()
        raise IndexUnusable(f"index unreadable: {exc}") from None
    except BaseException:
        conn.close()
        raise


def _check_unread(layout: Layout, meta: Meta, snap: Snapshot) -> None:
    """Bytes the index has not read may only be a torn tail without a reset key (not an
    item, not a floor, as the scan sees it); anything else is answered by the scan."""
    n = snap.chat_size - meta.chat_read
    if n == 0:
        return
    if n > MAX_LINE:
        raise IndexBehind("the index has not caught up yet")
    data = read_span(layout.chat, meta.chat_read, n)
    if data is None:
        raise IndexUnusable("chat.jsonl is shorter than its stamp")
    if b"\n" in data or mentions_reset_key(data):
        raise IndexBehind("the index has not caught up yet")


# -- re-reading rows ---------------------------------------------------------------------


class _OutOfBudget(Exception):
    pass


def _reread(ctx: pages.Ctx, pos: int, length: int, want: bytes | None) -> Seen:
    budget = ctx.budget
    if budget.rows_left == 0 or length > budget.bytes_left:
        raise _OutOfBudget
    a = ctx.archive_size
    path, local = (ctx.layout.archive, pos) if pos < a else (ctx.layout.chat, pos - a)
    data = read_span(path, local, length)
    budget.bytes += length
    budget.rows += 1
    if data is None or not data.endswith(b"\n") or want is None or digest(data[:-1]) != want:
        raise IndexMismatch(f"row at {pos} differs from the index")
    return classify(RawLine(pos, pos + length, data[:-1], mentions_reset_key(data), True))


def _item(ctx: pages.Ctx, pos: int, length: int, want: bytes | None) -> Seen:
    seen = _reread(ctx, pos, length, want)
    if seen.kind is not Kind.ITEM or seen.item is None:
        raise IndexMismatch(f"row at {pos} is no longer an item")
    return seen


# -- filters and candidates ----------------------------------------------------------------


def _filters(ctx: pages.Ctx) -> tuple[str, list[Any]]:
    sql, args = "", []
    if ctx.req.role is not None:
        sql += " AND r.role = ?"
        args.append(ctx.req.role)
    if ctx.req.tool_name is not None:
        sql += " AND instr(r.tools, ?) > 0"
        args.append(storable(TOOL_SEP + ctx.req.tool_name + TOOL_SEP)[0])
    return sql, args


def _order(ctx: pages.Ctx) -> tuple[str, str]:
    return ("<", "DESC") if ctx.req.newest_first else (">", "ASC")


def _ix_state(ctx: pages.Ctx, pos: int, scan: CursorState, win: int = 0) -> CursorState:
    """An index cursor: the bound ``pos`` (and list_items' window), and ``scan``, the same
    place as the bounded scan's cursor, for a next call that cannot use the index. Both
    name transcript positions, which a verified append does not move (R26)."""
    return ctx.state(phase="ix", pos=pos, win=win, scan=scan)


def _back(ctx: pages.Ctx, end: int, **fields: Any) -> CursorState:
    """A scan cursor reading newest first from the line boundary ``end``."""
    return ctx.state(phase="back", pos=end, **fields)


def _fwd(ctx: pages.Ctx, start: int, phase: str = "ofwd", **fields: Any) -> CursorState:
    """A scan cursor reading oldest first from the line boundary ``start``."""
    return ctx.state(phase=phase, pos=start, **fields)


# -- search ------------------------------------------------------------------------------


def _words_candidates(ix: Ix, match: str, lo: int, hi: int, *, newest: bool) -> Iterator[int]:
    """Positions in ``(lo, hi)`` of the items holding a term of a words query, in order."""
    order = "DESC" if newest else "ASC"
    sql = (
        "SELECT rowid FROM words WHERE words MATCH ? AND rowid > ? AND rowid < ? "  # noqa: S608
        f"ORDER BY rowid {order}"
    )
    yield from (int(r[0]) for r in _rows(ix.conn, sql, [match, lo, hi]))


def search(ctx: pages.Ctx, ix: Ix, state: CursorState | None) -> pages.Page:
    empty = pages.no_terms(ctx)
    if empty is not None:
        return empty
    if ctx.req.words and ctx.req.relevance:
        return _search_ranked(ctx, ix, state)
    query = ctx.req.key
    find = pages.search_finder(ctx)
    newest = ctx.req.newest_first
    bound = state.pos if state is not None else (_TOP if newest else ix.floor)
    lo, hi = (ix.floor, bound) if newest else (bound, _TOP)
    if ctx.req.words:
        match = index_query(query)
        found = iter(()) if match is None else _words_candidates(ix, match, lo, hi, newest=newest)
    else:  # literal: the rows whose tokens hold the query's pieces, or every row, in R24
        narrowed = candidates(ix.conn, query, lo, hi, newest=newest)
        found = _examined(ctx, ix, lo, hi, newest=newest) if narrowed is None else narrowed
    entries: list[dict[str, Any]] = []
    for pos in found:
        got = _hit(ctx, ix, pos, find)
        if got is _OUT:
            length, wid = _length_wid(ix, pos)
            return pages.Page(entries, _search_at(ctx, pos, length, wid), _note(entries))
        if got is None:
            continue
        entry, length, wid = got
        if entry is None:
            return pages.Page(entries, _search_at(ctx, pos, length, wid))
        entries.append(entry)
        if len(entries) >= ctx.req.limit:
            return pages.Page(entries, _search_after(ctx, pos, length, wid))
    return pages.Page(entries, None)


_OUT = object()  # the call's scan budget cannot re-read this row


def _examined(ctx: pages.Ctx, ix: Ix, lo: int, hi: int, *, newest: bool) -> Iterator[int]:
    """Positions in ``(lo, hi)`` of every item the filters leave, in order: the candidates
    of a literal query no piece of which narrows the search. Each is re-read (and counted
    against R24's 2 MiB / 500-row bound) like a row the scan reads."""
    order = "DESC" if newest else "ASC"
    narrow, nargs = _filters(ctx)  # rows the filters leave out are not examined
    sql = (
        f"SELECT r.pos FROM rows r WHERE r.kind = {KIND_ITEM} "  # noqa: S608
        f"AND r.pos > ? AND r.pos < ?{narrow} ORDER BY r.pos {order}"
    )
    yield from (int(r[0]) for r in _rows(ix.conn, sql, [lo, hi, *nargs]))


def _length_wid(ix: Ix, pos: int) -> tuple[int, bytes]:
    got = ix.conn.execute("SELECT len, wid FROM rows WHERE pos = ?", (pos,)).fetchone()
    return int(got[0]), got[1]


def _hit(
    ctx: pages.Ctx, ix: Ix, pos: int, find: Callable[[str], tuple[int, int] | None]
) -> Any:
    """The candidate at ``pos`` confirmed on its re-read row: ``(entry or None when it does
    not fit, length, wid)``; None when it is no hit (or filtered out); ``_OUT`` when the
    budget is spent."""
    row = ix.conn.execute(
        "SELECT kind, len, digest, wid, role, tools FROM rows WHERE pos = ?", (pos,)
    ).fetchone()
    if row is None:
        return None
    kind, length, want, wid, row_role, tools = row
    role, tool = ctx.req.role, ctx.req.tool_name
    if kind != KIND_ITEM or (role is not None and row_role != role):
        return None
    if tool is not None and storable(TOOL_SEP + tool + TOOL_SEP)[0] not in (tools or ""):
        return None
    try:
        seen = _item(ctx, pos, length, want)
    except _OutOfBudget:
        return _OUT
    assert seen.item is not None
    span = find(seen.item.text)
    if span is None:  # a candidate only: its tokens hold the query's pieces
        return None
    return page_entries.fit_snippet(ctx, seen.item, id_str(wid), span[0], span[1]), length, wid


#: a relevance search ranks this many of the best items first, then the rest newest first
RANKED = 250


def _search_ranked(ctx: pages.Ctx, ix: Ix, state: CursorState | None) -> pages.Page:
    """A words search in rank order (bm25() over the words table, machine notes weighed
    down, a share of the score of the hit on the line before, :mod:`~segue._retrieval.ranking`):
    the best ``RANKED`` items above the floor as of the first page, then every other
    hit newest first. The ranked positions live in the cursor's state, so appends (which
    move no position) neither repeat nor lose an item; what was appended after the first
    page is not part of the query. Each cursor also holds its place as a scan cursor
    (:func:`_ranked_state`), so a next call that cannot use the index goes on with the scan."""
    find = pages.search_finder(ctx)
    match = index_query(ctx.req.key)
    if match is None:
        return pages.Page([], None)
    if state is None or (state.rk == 0 and not state.ranked):
        # the first page, or a look-back that began on the scan and returns to the index:
        # rank what is below where it stands (everything above was returned, and so were
        # the items it names in ``shown``)
        below = ctx.end if state is None else state.pos
        shown = frozenset(state.shown) if state is not None else frozenset()
        narrow, nargs = _filters(ctx)
        ranked = tuple(
            p for p in (
                int(r[0])
                for r in ix.conn.execute(
                    # each hit: its score and where its line ends (the words table
                    # first: a join the other way round runs the MATCH once per row) ...
                    "WITH h AS (SELECT w.rowid AS pos, w.rowid + r.len AS e, "  # noqa: S608
                    "-bm25(words) * (CASE r.mach WHEN 1 THEN ? ELSE 1.0 END) AS s "
                    "FROM words w CROSS JOIN rows r ON r.pos = w.rowid "
                    f"WHERE words MATCH ? AND w.rowid > ? AND w.rowid < ? "
                    f"AND r.kind = {KIND_ITEM}{narrow}), "
                    # ... and the hit before it (a window, not a self-join: SQLite would
                    # compare every pair), whose score it gains a share of when that hit's
                    # line ends where its own starts
                    "g AS (SELECT pos, s, lag(e) OVER (ORDER BY pos) AS pe, "
                    "lag(s) OVER (ORDER BY pos) AS ps FROM h) "
                    "SELECT pos FROM g ORDER BY s + (CASE WHEN pe = pos THEN ? * ps "
                    "ELSE 0.0 END) DESC, pos DESC LIMIT ?",
                    [MACHINE_WEIGHT, match, ix.floor, below, *nargs, NEIGHBOUR_SHARE,
                     RANKED + len(shown)],
                )
            ) if p not in shown
        )[:RANKED]
        state = ctx.state(phase="ix", pos=below, ranked=ranked, rk=0, shown=tuple(shown))
    entries: list[dict[str, Any]] = []
    ranked, rk = state.ranked, state.rk
    # first the ranked items, then the others newest first below the first page's end
    chosen = frozenset(ranked) | frozenset(state.shown)
    tail = (
        p for p in _words_candidates(ix, match, ix.floor, state.pos, newest=True)
        if p not in chosen
    )
    queue = [(i, p) for i, p in enumerate(ranked) if i >= rk]
    for index, pos in itertools.chain(queue, ((len(ranked), p) for p in tail)):
        at_tail = index >= len(ranked)
        got = _hit(ctx, ix, pos, find)
        if got is _OUT or (isinstance(got, tuple) and got[0] is None):
            # the next page starts with this item
            if at_tail:
                resume = _ranked_state(ctx, state, pos + 1, index, pos + _length_wid(ix, pos)[0])
            else:
                resume = _ranked_state(ctx, state, state.pos, index, state.pos)
            return pages.Page(entries, resume, _note(entries) if got is _OUT else None)
        if got is None:
            continue
        entries.append(got[0])
        if len(entries) >= ctx.req.limit:  # the next page starts after this item
            if at_tail:
                resume = _ranked_state(ctx, state, pos, index + 1, pos)
            else:
                resume = _ranked_state(ctx, state, state.pos, index + 1, state.pos)
            return pages.Page(entries, resume)
    return pages.Page(entries, None)


def _ranked_state(
    ctx: pages.Ctx, state: CursorState, pos: int, rk: int, top: int
) -> CursorState:
    """A relevance cursor going on from the bound ``pos`` (the tail's, or the first page's
    end while ranked items remain) at the ``rk``-th ranked item (past them all: in the
    tail), and the same place as a scan cursor, for a next call that cannot use the index:
    newest first from the line boundary ``top``, skipping the items already returned below
    it (the ranked ones before ``rk``, and those the cursor already named). The scan then
    returns every other hit once, ranked within its pages (R39), and checks for new floors
    as for any scan cursor (R26)."""
    returned = state.ranked[:rk]
    scan = pages.keep_shown(_back(ctx, top), (*returned, *state.shown))
    return ctx.state(phase="ix", pos=pos, ranked=state.ranked, rk=rk, shown=state.shown,
                     scan=scan)


def _search_at(ctx: pages.Ctx, pos: int, length: int, wid: bytes) -> CursorState:
    """The next page starts with the row at ``pos`` (``length`` bytes, window ``wid``)."""
    if ctx.req.newest_first:
        return _ix_state(ctx, pos + 1, _back(ctx, pos + length))
    return _ix_state(ctx, pos - 1, _fwd(ctx, pos, window=id_str(wid)))


def _search_after(ctx: pages.Ctx, pos: int, length: int, wid: bytes) -> CursorState:
    """The next page starts after the row at ``pos``, in the page's order."""
    if ctx.req.newest_first:
        return _ix_state(ctx, pos, _back(ctx, pos))
    return _ix_state(ctx, pos, _fwd(ctx, pos + length, window=id_str(wid)))


def _resume(ctx: pages.Ctx, pos: int) -> int:
    """The bound that makes the next page start *at* the row at ``pos``."""
    return pos + 1 if ctx.req.newest_first else pos - 1


def _note(entries: list[dict[str, Any]]) -> str | None:
    return pages.NOTE_MORE if not entries else None


# -- list_items --------------------------------------------------------------------------


def _window_pos(ix: Ix, target: str) -> int:
    row = ix.conn.execute(
        "SELECT pos FROM rows WHERE kind IN (1, 2) AND wid = ? AND pos >= ? "
        "ORDER BY pos DESC LIMIT 1",
        (id_bytes(target), ix.floor),
    ).fetchone()
    if row is not None:
        return int(row[0])
    if target == ROOT_WINDOW_ID and ix.floor == ROOT_POS:
        return ROOT_POS
    raise pages.PageFailure("window_not_found", f"no window {target!r} above the privacy floor")


def list_items(ctx: pages.Ctx, ix: Ix, state: CursorState | None) -> pages.Page:
    target = ctx.req.key
    win = state.win if state is not None else _window_pos(ix, target)
    cmp, direction = _order(ctx)
    bound = state.pos if state is not None else (_TOP if ctx.req.newest_first else _BOTTOM)
    narrow, nargs = _filters(ctx)
    sql = (
        "SELECT pos, len, digest FROM rows r WHERE kind = 0 AND win = ? "  # noqa: S608
        f"AND pos {cmp} ?{narrow} ORDER BY pos {direction} LIMIT ?"
    )
    entries: list[dict[str, Any]] = []
    limit = ctx.req.limit
    for pos, length, want in _rows(ix.conn, sql, [win, bound, *nargs, limit + 1]):
        if len(entries) >= limit:
            return pages.Page(entries, _items_at(ctx, ix, pos, length, win))
        try:
            seen = _item(ctx, pos, length, want)
        except _OutOfBudget:
            return pages.Page(entries, _items_at(ctx, ix, pos, length, win), _note(entries))
        assert seen.item is not None
        entry = page_entries.item_entry(
            seen.item, target, page_entries.preview(seen.item.text, ctx.req.max_chars)
        )
        if not ctx.fits(entry):
            return pages.Page(entries, _items_at(ctx, ix, pos, length, win))
        entries.append(entry)
    return pages.Page(entries, None)


def _items_at(ctx: pages.Ctx, ix: Ix, pos: int, length: int, win: int) -> CursorState:
    """The next page starts with the item at ``pos`` of the window starting at ``win``."""
    if not ctx.req.newest_first:
        return _ix_state(ctx, _resume(ctx, pos), _fwd(ctx, pos, phase="fwd"), win)
    begin = 0
    if win != ROOT_POS:  # the window's rows start after its boundary line
        row = ix.conn.execute("SELECT len FROM rows WHERE pos = ?", (win,)).fetchone()
        begin = win + int(row[0])
    scan = ctx.state(phase="iback", pos=pos + length, end=begin)
    return _ix_state(ctx, _resume(ctx, pos), scan, win)


# -- list_windows --------------------------------------------------------------------------


def _windows(
    ix: Ix, ctx: pages.Ctx, bound: int
) -> Iterator[tuple[int, int, bytes | None, bytes, str]]:
    """(pos, len, digest, window id, kind) of the windows above the floor, in order; the root
    window (pos ROOT_POS) when there is no floor."""
    cmp, direction = _order(ctx)
    sql = (
        "SELECT pos, len, digest, wid, wkind FROM rows WHERE kind IN (1, 2) AND pos >= ? "  # noqa: S608
        f"AND pos {cmp} ? ORDER BY pos {direction}"
    )
    boundaries = _rows(ix.conn, sql, [ix.floor, bound])
    root_in = ix.floor == ROOT_POS and (
        bound > ROOT_POS if ctx.req.newest_first else bound < ROOT_POS
    )
    root = (ROOT_POS, 0, None, id_bytes(ROOT_WINDOW_ID), "root")
    if root_in and not ctx.req.newest_first:
        yield root
    yield from boundaries
    if root_in and ctx.req.newest_first:
        yield root


def list_windows(ctx: pages.Ctx, ix: Ix, state: CursorState | None) -> pages.Page:
    bound = state.pos if state is not None else (_TOP if ctx.req.newest_first else _BOTTOM)
    out: list[dict[str, Any]] = []
    for pos, length, want, wid, wkind in _windows(ix, ctx, bound):
        if pos != ROOT_POS and want is not None:
            try:
                _boundary(ctx, pos, length, want)
            except _OutOfBudget:
                at = _windows_at(ctx, ix, pos, length, wid=wid, wkind=wkind)
                return pages.Page(out, at, _note(out))
        count, first, last = _window_stats(ix, pos)
        entry = pages.window_entry(id_str(wid), wkind, first, last, count)
        if len(out) >= ctx.req.limit or not ctx.fits(entry):
            return pages.Page(out, _windows_at(ctx, ix, pos, length, wid=wid, wkind=wkind))
        out.append(entry)
    return pages.Page(out, None)


def _windows_at(
    ctx: pages.Ctx, ix: Ix, pos: int, length: int, *, wid: bytes, wkind: str
) -> CursorState:
    """The next page starts with the window whose boundary is at ``pos``. The scan reads
    newest first from the end of that boundary line, its items already counted, or oldest
    first from there, none counted yet."""
    start = 0 if pos == ROOT_POS else pos + length
    if ctx.req.newest_first:
        count, first, last = _window_stats(ix, pos)
        scan = _back(ctx, start, first=first, last=last, count=count)
    else:
        scan = _fwd(ctx, start, window=id_str(wid), wkind=wkind)
    return _ix_state(ctx, _resume(ctx, pos), scan)


def _boundary(ctx: pages.Ctx, pos: int, length: int, want: bytes) -> None:
    seen = _reread(ctx, pos, length, want)
    if seen.kind not in (Kind.BOUNDARY, Kind.FLOOR):
        raise IndexMismatch(f"row at {pos} is no longer a boundary")


def _window_stats(ix: Ix, win: int) -> tuple[int, str | None, str | None]:
    count, lo, hi = ix.conn.execute(
        "SELECT count(*), min(pos), max(pos) FROM rows WHERE kind = 0 AND win = ?",
        (win,),
    ).fetchone()
    if not count:
        return 0, None, None
    ids = dict(
        ix.conn.execute("SELECT pos, item FROM rows WHERE pos IN (?, ?)", (lo, hi)).fetchall()
    )
    return int(count), id_str(ids[lo]), id_str(ids[hi])


# -- read_item ---------------------------------------------------------------------------


def read_item(ctx: pages.Ctx, ix: Ix, state: CursorState | None) -> pages.Page:
    wanted = ctx.req.key
    # one indexed lookup per way of naming a row (an OR of both would scan every item)
    named = [("item", id_bytes(wanted))]
    if wanted.startswith("m:"):
        named.append(("rid", id_bytes(wanted[2:])))
    newest = max(
        (
            ix.conn.execute(
                f"SELECT max(pos) FROM rows WHERE kind = 0 AND {column} = ? AND pos > ?",  # noqa: S608
                (value, ix.floor),
            ).fetchone()[0]
            for column, value in named
        ),
        key=lambda p: -1 if p is None else int(p),
    )
    row = None
    if newest is not None:
        row = ix.conn.execute(
            "SELECT pos, len, digest, wid, win FROM rows WHERE pos = ?", (newest,)
        ).fetchone()
    if row is None:
        raise pages.PageFailure("item_not_found", f"no item {wanted!r} above the privacy floor")
    pos, length, want, wid, win = row
    try:
        seen = _item(ctx, pos, length, want)
    except _OutOfBudget:  # only when a line is larger than a call's whole budget
        raise IndexUnusable("the item is larger than one call may read") from None
    offset = ctx.req.offset_chars if ctx.req.offset_chars is not None else 0
    page = pages_read.page_text(ctx, pos, pos + length, seen, window=id_str(wid), offset=offset)
    begin = 0
    if win != ROOT_POS:  # the window's rows start after its boundary line
        got = ix.conn.execute("SELECT len FROM rows WHERE pos = ?", (win,)).fetchone()
        begin = win + int(got[0])
    page.near = pages_read.near(ctx, pos, pos + length, begin)
    return page


ACTIONS = {
    "list_windows": list_windows,
    "list_items": list_items,
    "search": search,
    "read_item": read_item,
}
