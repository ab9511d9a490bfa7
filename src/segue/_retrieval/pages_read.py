"""``read_item`` on the bounded scan, and the page of one item's text every backend returns
(character paging within the 16 KiB bound, R24). A row's window is its next boundary below it,
looked for within what is left of the call's budget; a cursor goes on where that ran out."""

from __future__ import annotations

import msgspec

from segue._context.boundaries import ROOT_WINDOW_ID
from segue._context.floor import mentions_reset_key
from segue._retrieval import envelope
from segue._retrieval.cursor import CursorState
from segue._retrieval.page_entries import item_entry
from segue._retrieval.pages import (
    Ctx,
    Page,
    PageFailure,
    back_state,
    item_matches,
    locate,
    more,
)
from segue._retrieval.project import Kind, Seen, classify
from segue._retrieval.reader import BackState, BackwardReader, RawLine, read_span


def read_item(ctx: Ctx, state: CursorState | None) -> Page:
    wanted = ctx.req.key
    missing = PageFailure("item_not_found", f"no item {wanted!r} above the privacy floor")
    if state is not None and state.phase == "item":
        if ctx.req.offset_chars is not None and ctx.req.offset_chars != state.offset:
            raise PageFailure("invalid_argument", "offset_chars differs from the cursor's")
        return _read_located(ctx, state.pos, state.end, window=state.window, offset=state.offset)
    if state is not None and state.phase == "iwin":
        window, at, begin = _window_of(ctx, BackState(state.pos, state.skip, state.skip_marker))
        if window is None:
            wait = ctx.state(
                phase="iwin",
                pos=at.pos,
                skip=at.skip_end,
                skip_marker=at.skip_marker,
                end=state.end,
            )
            return more(
                [], msgspec.structs.replace(wait, item_at=state.item_at, offset=state.offset)
            )
        page = _read_located(ctx, state.item_at, state.end, window=window, offset=state.offset)
        page.near = near(ctx, state.item_at, state.end, begin)  # the item's first page
        return page

    def is_wanted(seen: Seen) -> bool:
        return seen.kind is Kind.ITEM and seen.item is not None and item_matches(seen.item, wanted)

    found, at, at_start = locate(ctx, state, is_wanted, missing)
    if found is None:
        if at_start:
            raise missing
        return more([], back_state(ctx, at))
    window, at, begin = _window_of(ctx, BackState(found.line.start))
    offset = ctx.req.offset_chars if ctx.req.offset_chars is not None else 0
    if window is None:  # its window's boundary lies beyond this call's budget
        wait = ctx.state(
            phase="iwin",
            pos=at.pos,
            skip=at.skip_end,
            skip_marker=at.skip_marker,
            end=found.line.end,
            offset=offset,
        )
        return more([], msgspec.structs.replace(wait, item_at=found.line.start))
    page = page_text(
        ctx, found.line.start, found.line.end, found.seen, window=window, offset=offset
    )
    page.near = near(ctx, found.line.start, found.line.end, begin)
    return page


def near(ctx: Ctx, start: int, end: int, begin: int) -> tuple[CursorState, CursorState]:
    """The list_items cursors (pages_order's ``iback``, pages.py's ``fwd``) of the window whose
    rows start at ``begin``, around the row ``[start, end)``: newest first from just before
    it, oldest first from just after it. Every JSONL backend goes on from them (the index
    where they map, index_resume.py)."""
    return ctx.state(phase="iback", pos=start, end=begin), ctx.state(phase="fwd", pos=end)


def _window_of(ctx: Ctx, start: BackState) -> tuple[str | None, BackState, int]:
    """The window of the row ending at ``start``, and where its rows begin: the next boundary
    below it, within what is left of this call's budget (None, and where to go on, when that
    is not enough)."""
    reader = BackwardReader(ctx.segments(), start, ctx.budget)
    for older in reader:
        seen = classify(older)
        if seen.kind in (Kind.BOUNDARY, Kind.FLOOR):
            return seen.window_id, start, older.end
    return (None, reader.state, 0) if reader.exhausted else (ROOT_WINDOW_ID, start, 0)


def _read_located(ctx: Ctx, start: int, end: int, *, window: str | None, offset: int) -> Page:
    a = ctx.archive_size
    path, local = (ctx.layout.archive, start) if start < a else (ctx.layout.chat, start - a)
    data = read_span(path, local, end - start)
    ctx.budget.bytes += end - start
    ctx.budget.rows += 1
    if data is None or not data.endswith(b"\n"):
        raise PageFailure("history_changed", "the item's bytes changed; read it again")
    # The same reset-key test as every reader (any JSON spelling of the key, not just one).
    seen = classify(RawLine(start, end, data[:-1], mentions_reset_key(data), True))
    if seen.kind is not Kind.ITEM or seen.item is None:
        raise PageFailure("history_changed", "the item's bytes changed; read it again")
    return page_text(ctx, start, end, seen, window=window, offset=offset)


def page_text(
    ctx: Ctx, start: int, end: int, seen: Seen, *, window: str | None, offset: int
) -> Page:
    assert seen.item is not None
    text = seen.item.text
    if offset > len(text):
        raise PageFailure(
            "invalid_argument", f"offset_chars {offset} is past the item's {len(text)} characters"
        )
    shell = item_entry(seen.item, window, "")
    shell["nextCharOffset"] = len(text)
    shell["totalChars"] = len(text)
    room = envelope.MAX_RESULT - ctx.used - envelope.entry_size(shell)
    stop = envelope.fit_prefix(text, offset, ctx.req.limit_chars, max(room, 0))
    if stop == offset and offset < len(text):
        raise PageFailure("invalid_argument", "limit_chars leaves no room for any text")
    entry = item_entry(seen.item, window, text[offset:stop])
    entry["nextCharOffset"] = stop if stop < len(text) else None
    entry["totalChars"] = len(text)
    ctx.used += envelope.entry_size(entry)
    if stop >= len(text):
        return Page([entry], None)
    return Page([entry], ctx.state(phase="item", pos=start, end=end, window=window, offset=stop))
