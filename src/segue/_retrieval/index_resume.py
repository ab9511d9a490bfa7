"""A look-back that began on the bounded scan goes on from the history index once it is trusted
(SPEC.md §7: "cursor and all"): the scan cursor's place as an index cursor, where both name
the same place. Runs with the store lock held, the index open and caught up.

A scan cursor names a transcript position (a line start or end) and what the page was
doing there; an index cursor names a bound position and, for ``list_items``, the window's
boundary. Where the scan was in the middle of something the index cannot name (an oversized
line being crossed, hits held until their window is known), the scan goes on. Every mapping
keeps the query's answers what the scan would have given:

* ``search`` newest first or by relevance: the rows below the scan's position; oldest
  first: the rows from the scan's position on (a scan still locating the floor starts the
  index's first page, above the index's floor);
* ``list_items``: the window is the one the scan located (the newest boundary of that id
  above the floor, checked to be below where the scan stands), and the rest of it from the
  scan's position on, in the page's order; a scan still locating the window starts the
  index's first page (it returned nothing yet);
* ``read_item``: a scan still locating the item gives way to the index's lookup when the
  newest row of that name lies below where the scan stands (so it is the row the scan would
  find); a scan that found the item and is looking for its window learns the window from
  the index and reads the item's page (one row).
"""

from __future__ import annotations

import msgspec

from segue._context.boundaries import ROOT_WINDOW_ID
from segue._retrieval import pages
from segue._retrieval.cursor import CursorState
from segue._retrieval.index_file import KIND_ITEM, ROOT_POS, id_bytes, id_str
from segue._retrieval.index_pages import Ix

_TOP = 1 << 62  # above every position (index_pages' bound of a first newest-first page)
_BOTTOM = ROOT_POS - 1  # below every position


def resume(ctx: pages.Ctx, ix: Ix, state: CursorState) -> CursorState | pages.Page:
    """``state`` (a scan cursor) as the cursor that goes on from the index, or unchanged; or
    the page of the hits the scan held until their window was known, which the index knows
    (then the look-back goes on from the index)."""
    if state.skip is not None:
        return state
    action = ctx.req.action
    if action == "search" and not ctx.req.newest_first:
        if state.phase == "oloc":  # still locating the floor: nothing returned yet
            return _ix(state, pos=ix.floor)
        if state.phase == "ofwd":
            return _ix(state, pos=state.pos - 1)  # hits from state.pos on
        return state
    if action == "search":
        if state.phase != "back":
            return state
        if state.held:
            return _held(ctx, ix, state)
        if state.after is not None:
            return state
        return _ix(state, pos=state.pos, ranked=(), rk=0)
    if state.held or state.after is not None:
        return state
    if action == "list_items":
        return _list_items(ctx, ix, state)
    if action == "read_item":
        return _read_item(ctx, ix, state)
    return state


def _ix(state: CursorState, **fields: object) -> CursorState:
    return msgspec.structs.replace(state, phase="ix", scan=state, **fields)


def _held(ctx: pages.Ctx, ix: Ix, state: CursorState) -> CursorState | pages.Page:
    """The held hits lie above ``state.pos`` with no boundary between (a boundary would have
    resolved them): their window is the one open at ``state.pos``. Once all are returned the
    search goes on from the index below them (below ``after`` when the scan read past them
    only to look for that boundary)."""
    row = ix.conn.execute(
        "SELECT wid FROM rows WHERE pos < ? ORDER BY pos DESC LIMIT 1", (state.pos,)
    ).fetchone()
    window = ROOT_WINDOW_ID if row is None else id_str(row[0])
    entries, rest = pages.held_page(ctx, list(state.held), window)
    if not entries:
        return state
    if rest:
        wait = ctx.state(phase="back", pos=state.pos, held=rest, after=state.after)
        return pages.Page(entries, wait)  # ranked, best first, when held
    on = state.pos if state.after is None else state.after
    scan = ctx.state(phase="back", pos=on)
    following = msgspec.structs.replace(scan, scan=scan, phase="ix", ranked=(), rk=0)
    return pages.Page(entries, following)


def _window(ix: Ix, target: str) -> tuple[int, int] | None:
    """(start, end) of the boundary line of the newest window ``target`` above the floor
    ((ROOT_POS, 0) for the root window); None when the index knows no such window."""
    row = ix.conn.execute(
        "SELECT pos, len FROM rows WHERE kind IN (1, 2) AND wid = ? AND pos >= ? "
        "ORDER BY pos DESC LIMIT 1",
        (id_bytes(target), ix.floor),
    ).fetchone()
    if row is not None:
        return int(row[0]), int(row[0]) + int(row[1])
    if target == ROOT_WINDOW_ID and ix.floor == ROOT_POS:
        return ROOT_POS, 0
    return None


def _inside(ix: Ix, begin: int, pos: int) -> bool:
    """No boundary or floor starts in ``[begin, pos)``: ``pos`` is in the window that
    starts at ``begin``."""
    row = ix.conn.execute(
        "SELECT 1 FROM rows WHERE kind IN (1, 2) AND pos >= ? AND pos < ? LIMIT 1",
        (begin, pos),
    ).fetchone()
    return row is None


def _list_items(ctx: pages.Ctx, ix: Ix, state: CursorState) -> CursorState:
    found = _window(ix, ctx.req.key)
    if found is None:
        return state
    win, begin = found
    newest = ctx.req.newest_first
    first_page = _TOP if newest else _BOTTOM
    if state.phase == "back":  # still locating the window: nothing returned yet
        return _ix(state, pos=first_page, win=win) if win < state.pos else state
    if not newest and state.phase == "fwd":
        if begin <= state.pos and _inside(ix, begin, state.pos):
            return _ix(state, pos=state.pos - 1, win=win)  # rows from state.pos on
        return state
    if newest and state.phase == "span" and state.end == begin:  # nothing returned yet
        return _ix(state, pos=first_page, win=win)
    inside = begin <= state.pos and _inside(ix, begin, state.pos)
    if newest and state.phase == "iback" and state.end == begin and inside:
        return _ix(state, pos=state.pos, win=win)  # rows starting below state.pos
    return state


def _read_item(ctx: pages.Ctx, ix: Ix, state: CursorState) -> CursorState:
    if state.phase == "back":
        newest = _newest_named(ix, ctx.req.key)
        return _ix(state) if newest is None or newest < state.pos else state
    if state.phase == "iwin":
        row = ix.conn.execute(
            "SELECT len, wid, kind FROM rows WHERE pos = ?", (state.item_at,)
        ).fetchone()
        if row is None or row[2] != KIND_ITEM or state.item_at + int(row[0]) != state.end:
            return state
        return msgspec.structs.replace(
            state, phase="item", pos=state.item_at, window=id_str(row[1])
        )
    return state


def _newest_named(ix: Ix, wanted: str) -> int | None:
    """Position of the newest item above the floor that ``wanted`` names (as index_pages'
    ``read_item`` looks it up)."""
    named = [("item", id_bytes(wanted))]
    if wanted.startswith("m:"):
        named.append(("rid", id_bytes(wanted[2:])))
    found = [
        ix.conn.execute(
            f"SELECT max(pos) FROM rows WHERE kind = {KIND_ITEM} AND {column} = ? "  # noqa: S608
            "AND pos > ?",
            (value, ix.floor),
        ).fetchone()[0]
        for column, value in named
    ]
    positions = [int(p) for p in found if p is not None]
    return max(positions) if positions else None
