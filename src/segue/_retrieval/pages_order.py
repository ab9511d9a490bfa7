"""The bounded scan's pages in the other order (R36): ``search`` and ``list_windows``
oldest first, ``list_items`` newest first. Runs with the store lock held, like pages.py.

Oldest first still never shows a byte below the floor: the first phase (``oloc``) reads
newest first, as every page of pages.py does, until it meets the newest floor (or the start
of history); only then do pages read forward from just after it. Continuation pages check
appended bytes for a new floor first (tool.py), so a forward read can never meet a floor;
if it does, the files moved under us and the page is dropped.

``list_items`` newest first locates the window's boundary (as pages.py does), reads forward
to the window's end (``span``), then reads the window backward (``iback``).
"""

from __future__ import annotations

from typing import Any

from segue._context.boundaries import ROOT_WINDOW_ID
from segue._retrieval.cursor import CursorState
from segue._retrieval.filters import row_passes
from segue._retrieval.page_entries import fit_snippet, item_entry, preview
from segue._retrieval.pages import (
    Ctx,
    Page,
    PageFailure,
    back_state,
    locate,
    more,
    no_terms,
    search_finder,
    search_prefilter,
    window_entry,
)
from segue._retrieval.project import Kind, Seen, classify
from segue._retrieval.reader import BackState, BackwardReader, ForwardReader, FwdState

_MOVED = PageFailure("history_changed", "the transcript changed while it was read; call again")


def _floor_start(ctx: Ctx, state: CursorState | None) -> tuple[FwdState, str, str] | Page:
    """Where reading oldest-first starts (just after the newest floor, or at 0) and the
    window open there (id, kind); or a page saying the search for the floor goes on."""

    def is_floor(seen: Seen) -> bool:
        return seen.kind is Kind.FLOOR

    found, at, at_start = locate(ctx, state, is_floor, _MOVED)
    if found is not None:
        return FwdState(found.line.end), found.seen.window_id or ROOT_WINDOW_ID, "reset"
    if at_start:
        return FwdState(0), ROOT_WINDOW_ID, "root"
    return more(
        [], ctx.state(phase="oloc", pos=at.pos, skip=at.skip_end, skip_marker=at.skip_marker)
    )


def _fwd(ctx: Ctx, at: FwdState, **fields: Any) -> CursorState:
    return ctx.state(
        phase="ofwd", pos=at.pos, skip=at.skip_start, skip_marker=at.skip_marker, **fields
    )


def _passes(ctx: Ctx, seen: Seen) -> bool:
    return row_passes(seen.row, ctx.req.role, ctx.req.tool_name)


def search_oldest(ctx: Ctx, state: CursorState | None) -> Page:
    empty = no_terms(ctx)
    if empty is not None:
        return empty
    if state is None or state.phase == "oloc":
        got = _floor_start(ctx, state)
        if isinstance(got, Page):
            return got
        fwd, window, _ = got
    else:
        fwd, window = FwdState(state.pos, state.skip, state.skip_marker), state.window or ""
    find = search_finder(ctx)
    prefilter = search_prefilter(ctx)
    hot = prefilter.hot if prefilter is not None else None
    reader = ForwardReader(ctx.segments(), fwd, ctx.budget, hot)
    entries: list[dict[str, Any]] = []
    for line in reader:
        seen = classify(line, prefilter)
        if seen.kind is Kind.FLOOR:
            raise _MOVED
        if seen.kind is Kind.BOUNDARY:
            window = seen.window_id or window
        elif seen.kind is Kind.ITEM and seen.item is not None and _passes(ctx, seen):
            span = find(seen.item.text)
            if span is None:
                continue
            entry = fit_snippet(ctx, seen.item, window, span[0], span[1])
            if entry is None:
                return Page(entries, _fwd(ctx, FwdState(line.start), window=window))
            entries.append(entry)
            if len(entries) >= ctx.req.limit:
                return Page(entries, _fwd(ctx, FwdState(line.end), window=window))
    if reader.exhausted:
        return more(entries, _fwd(ctx, reader.state, window=window))
    return Page(entries, None)


def list_windows_oldest(ctx: Ctx, state: CursorState | None) -> Page:
    if state is None or state.phase == "oloc":
        got = _floor_start(ctx, state)
        if isinstance(got, Page):
            return got
        fwd, wid, kind = got
        first: str | None = None
        last: str | None = None
        count = 0
    else:
        fwd = FwdState(state.pos, state.skip, state.skip_marker)
        wid, kind = state.window or "", state.wkind or ""
        first, last, count = state.first, state.last, state.count
    reader = ForwardReader(ctx.segments(), fwd, ctx.budget)
    out: list[dict[str, Any]] = []

    def keep(at: FwdState) -> CursorState:
        return _fwd(ctx, at, window=wid, wkind=kind, first=first, last=last, count=count)

    for line in reader:
        seen = classify(line)
        if seen.kind is Kind.FLOOR:
            raise _MOVED
        if seen.kind is Kind.ITEM and seen.item is not None:
            first = first if first is not None else seen.item.item_id
            last = seen.item.item_id
            count += 1
        elif seen.kind is Kind.BOUNDARY:
            entry = window_entry(wid, kind, first, last, count)
            if len(out) >= ctx.req.limit or not ctx.fits(entry):
                return Page(out, keep(FwdState(line.start)))
            out.append(entry)
            wid, kind = seen.window_id or "", seen.window_kind or ""
            first, last, count = None, None, 0
    if reader.exhausted:
        return more(out, keep(reader.state))
    entry = window_entry(wid, kind, first, last, count)
    if len(out) >= ctx.req.limit or not ctx.fits(entry):
        return Page(out, keep(FwdState(ctx.end)))
    out.append(entry)
    return Page(out, None)


def list_items_newest(ctx: Ctx, state: CursorState | None) -> Page:
    target = ctx.req.key
    if state is None or state.phase == "back":
        missing = PageFailure("window_not_found", f"no window {target!r} above the privacy floor")

        def wanted(seen: Seen) -> bool:
            return seen.kind in (Kind.BOUNDARY, Kind.FLOOR) and seen.window_id == target

        found, at, at_start = locate(ctx, state, wanted, missing)
        if found is not None:
            begin = found.line.end
        elif at_start and target == ROOT_WINDOW_ID:
            begin = 0
        elif at_start:
            raise missing
        else:
            return more([], back_state(ctx, at))
        state = ctx.state(phase="span", pos=begin, end=begin)
    if state.phase == "span":
        reader = ForwardReader(
            ctx.segments(), FwdState(state.pos, state.skip, state.skip_marker), ctx.budget
        )
        stop = None
        for line in reader:
            if classify(line).kind in (Kind.BOUNDARY, Kind.FLOOR):
                stop = line.start
                break
        else:
            if reader.exhausted:
                st = reader.state
                return more([], _span(ctx, st, state.end))
            stop = ctx.end
        state = ctx.state(phase="iback", pos=stop, end=state.end)
    return _items_back(ctx, state)


def _span(ctx: Ctx, at: FwdState, begin: int) -> CursorState:
    return ctx.state(
        phase="span", pos=at.pos, skip=at.skip_start, skip_marker=at.skip_marker, end=begin
    )


def _items_back(ctx: Ctx, state: CursorState) -> Page:
    """Phase ``iback``: the window ``[state.end, state.pos)`` newest first."""
    begin = state.end
    reader = BackwardReader(
        ctx.segments(), BackState(state.pos, state.skip, state.skip_marker), ctx.budget
    )
    entries: list[dict[str, Any]] = []
    for line in reader:
        if line.end <= begin:
            return Page(entries, None)
        seen = classify(line)
        if seen.kind is Kind.ITEM and seen.item is not None and _passes(ctx, seen):
            entry = item_entry(seen.item, ctx.req.key, preview(seen.item.text, ctx.req.max_chars))
            if len(entries) >= ctx.req.limit or not ctx.fits(entry):
                return Page(entries, ctx.state(phase="iback", pos=line.end, end=begin))
            entries.append(entry)
    if reader.exhausted and reader.state.pos > begin:
        at = reader.state
        return more(
            entries,
            ctx.state(
                phase="iback", pos=at.pos, skip=at.skip_end, skip_marker=at.skip_marker, end=begin
            ),
        )
    return Page(entries, None)
