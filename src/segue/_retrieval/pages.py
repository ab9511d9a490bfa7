"""One bounded page of each action. Runs with the store lock held (see tool.py).

Order and privacy, the invariants of this module:

* ``list_windows`` and ``search`` read **newest first** from the end of the history. The
  newest manual reset is the first floor such a scan meets, so every row it returns before
  meeting a floor is above the floor by construction, and the scan stops at the floor. Nothing
  older than a floor is ever classified as an item.
* ``list_items`` and ``read_item`` first *locate* their target with the same newest-first
  scan (so the target is known to be above the floor), then page forward from it.
* A page stops when the byte or row budget (R24) or the entry limit or the 16 KiB result is
  reached, and returns a cursor that resumes exactly where it stopped: a page that found
  nothing while history remains returns an empty list, a cursor, and a ``note`` saying so.
  ``nextCursor`` is null only when nothing visible remains.
* Continuation pages first scan the bytes appended since the last page for a new floor
  (R26); a new floor hides everything older, so the query ends there.
* ``search`` items carry their window id, never null; a window is known only once its
  boundary (older than the hit) is read. Hits whose boundary lies beyond the page's budget are
  deferred to the next page (which resumes at the last boundary read); when a single window
  is larger than one page's budget, its hits wait in the cursor's state (``held``) until a
  later page reaches the boundary.
* A relevance ``search`` (R39) gathers more hits than it returns
  (:func:`~segue._retrieval.page_entries.gathered`), ranks them and answers the best; the
  others wait in ``held``, best first, so the next calls return them before reading on.
* This module reads in the default order (R36 ``order: newest``; ``list_items`` oldest
  first); :mod:`~segue._retrieval.pages_order` reads the other way round. Filters (``role``,
  ``tool_name``) only drop items; they never change what is read or where a floor stops it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from segue._context.boundaries import ROOT_WINDOW_ID
from segue._retrieval import envelope
from segue._retrieval.cursor import CursorState
from segue._retrieval.filters import row_passes
from segue._retrieval.matching import ByteFilter, make_prefilter
from segue._retrieval.page_entries import (
    GATHER_CHARS,
    Hit,
    best_first,
    fit_hit,
    gathered,
    held_hit,
    hold,
    item_entry,
    preview,
)
from segue._retrieval.project import Item, Kind, Seen, classify
from segue._retrieval.ranking import PageText, finder
from segue._retrieval.reader import (
    BackState,
    BackwardReader,
    Budget,
    ForwardReader,
    FwdState,
    RawLine,
    Segment,
)
from segue._retrieval.schema import Request
from segue._retrieval.snapshot import Snapshot
from segue._retrieval.words import query_terms
from segue._workspace import Layout

NOTE_MORE = (
    "Nothing to show within this call's scan bounds, but more history remains: "
    "call again with the same arguments and cursor=nextCursor."
)
NOTE_FLOOR = "A newer reset now hides the rest of this query's results."
NOTE_NO_TERMS = (
    "The query has no words to search for (only stop words, punctuation or symbols), so no "
    'item can match; to find the text itself, search with match: "literal".'
)


class PageFailure(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class Page:
    entries: list[dict[str, Any]]
    state: CursorState | None  # None: nothing visible remains
    note: str | None = None
    #: read_item over the JSONL files: list_items cursors of the item's window that read
    #: newest first from just before the located row, and oldest first from just after it
    #: (its neighbours, neighbours.py); None where the backend names no such place
    near: tuple[CursorState, CursorState] | None = None


@dataclass
class Ctx:
    layout: Layout
    snap: Snapshot
    budget: Budget
    req: Request
    base: CursorState  # binding and snapshot fields for the next cursor
    used: int = field(default=0)

    def __post_init__(self) -> None:
        self.used = envelope.base_size(self.req.action, _key_of(self.req.action))

    @property
    def archive_size(self) -> int:
        return self.snap.archive_size

    @property
    def end(self) -> int:
        return self.snap.archive_size + self.snap.chat_size

    def segments(self) -> list[Segment]:
        a = self.archive_size
        return [
            Segment(self.layout.archive, 0, a),
            Segment(self.layout.chat, a, a + self.snap.chat_size),
        ]

    def fits(self, entry: dict[str, Any]) -> bool:
        size = envelope.entry_size(entry)
        if self.used + size > envelope.MAX_RESULT:
            return False
        self.used += size
        return True

    def state(self, **changes: Any) -> CursorState:
        return msgspec.structs.replace(self.base, **changes)


def _key_of(action: str) -> str:
    return "windows" if action == "list_windows" else "items"


def entries_key(action: str) -> str:
    return _key_of(action)


# -- appended bytes ----------------------------------------------------------------------


def check_appended(ctx: Ctx, state: CursorState) -> tuple[CursorState, bool, bool]:
    """Scan chat bytes appended since the last page for a new floor.

    Returns (state with progress, floor found, check complete)."""
    new_end = ctx.snap.chat_size
    if state.ce >= new_end:
        return state, False, True
    a = ctx.archive_size
    start = FwdState(a + state.ce, None if state.cs is None else a + state.cs, state.cm)
    reader = ForwardReader([Segment(ctx.layout.chat, a, a + new_end)], start, ctx.budget)
    for line in reader:
        if classify(line).kind is Kind.FLOOR:
            return state, True, True
    if reader.exhausted:
        st = reader.state
        skip = None if st.skip_start is None else st.skip_start - a
        return (
            msgspec.structs.replace(state, ce=st.pos - a, cs=skip, cm=st.skip_marker),
            False,
            False,
        )
    return msgspec.structs.replace(state, ce=new_end, cs=None, cm=False), False, True


# -- list_windows ------------------------------------------------------------------------


def window_entry(
    wid: str, kind: str | None, first: str | None, last: str | None, count: int
) -> dict[str, Any]:
    return {
        "windowId": wid,
        "kind": kind,
        "firstItemId": first,
        "lastItemId": last,
        "items": count,
    }


def list_windows(ctx: Ctx, state: CursorState | None) -> Page:
    start = (
        BackState(ctx.end) if state is None else BackState(state.pos, state.skip, state.skip_marker)
    )
    first, last, count = (
        (None, None, 0) if state is None else (state.first, state.last, state.count)
    )
    reader = BackwardReader(ctx.segments(), start, ctx.budget)
    windows: list[dict[str, Any]] = []
    for line in reader:
        seen = classify(line)
        if seen.kind is Kind.ITEM and seen.item is not None:
            last = last if last is not None else seen.item.item_id
            first = seen.item.item_id
            count += 1
        elif seen.kind in (Kind.BOUNDARY, Kind.FLOOR) and seen.window_id is not None:
            entry = window_entry(seen.window_id, seen.window_kind, first, last, count)
            if len(windows) >= ctx.req.limit or not ctx.fits(entry):
                return Page(windows, back_state(ctx, BackState(line.end), first, last, count))
            windows.append(entry)
            first, last, count = None, None, 0
            if seen.kind is Kind.FLOOR:
                return Page(windows, None)
    if reader.exhausted:
        return more(windows, back_state(ctx, reader.state, first, last, count))
    root = window_entry(ROOT_WINDOW_ID, "root", first, last, count)
    if len(windows) >= ctx.req.limit or not ctx.fits(root):
        return Page(windows, back_state(ctx, BackState(0), first, last, count))
    windows.append(root)
    return Page(windows, None)


def back_state(
    ctx: Ctx, at: BackState, first: str | None = None, last: str | None = None, count: int = 0
) -> CursorState:
    return ctx.state(
        phase="back",
        pos=at.pos,
        skip=at.skip_end,
        skip_marker=at.skip_marker,
        first=first,
        last=last,
        count=count,
    )


def more(entries: list[dict[str, Any]], state: CursorState) -> Page:
    return Page(entries, state, NOTE_MORE if not entries else None)


# -- search ------------------------------------------------------------------------------


def _known(
    ctx: Ctx, at: BackState, boundary: RawLine | None, window: str | None, prior: CursorState | None
) -> dict[str, Any]:
    """The window a cursor reading newest first from ``at`` knows its next rows are in
    (issue 26: a search far above its window's boundary must not read down to it again on
    every page): the boundary this page met below ``at`` with nothing between, or the one
    the cursor already knew, while ``at`` is still above it."""
    if boundary is not None and window is not None and at.pos > boundary.start:
        return {"kw": window, "kb": boundary.start}
    if boundary is None and prior is not None and prior.kw is not None and at.pos > prior.kb:
        return {"kw": prior.kw, "kb": prior.kb}
    return {}


def _wanted_row(ctx: Ctx, seen: Seen) -> bool:
    return row_passes(seen.row, ctx.req.role, ctx.req.tool_name)


def search_finder(ctx: Ctx) -> Callable[[str], tuple[int, int] | None]:
    """What a hit of this search is (either ``match``), as every backend finds it."""
    return finder(ctx.req.key, ctx.req.match, ctx.req.max_chars)


def search_prefilter(ctx: Ctx) -> ByteFilter | None:
    """The scan's exact byte pre-filter (literal searches only: a stem proves nothing about
    the bytes)."""
    return make_prefilter(ctx.req.key) if ctx.req.match == "literal" else None


def no_terms(ctx: Ctx) -> Page | None:
    """The whole answer of a words search whose query has no terms left (R39): nothing can
    match it, on any backend, so nothing is read; None for any other search."""
    if not ctx.req.words or query_terms(ctx.req.key):
        return None
    return Page([], None, NOTE_NO_TERMS)


def search(ctx: Ctx, state: CursorState | None) -> Page:
    empty = no_terms(ctx)
    if empty is not None:
        return empty
    texts: dict[str, PageText] = {}
    page = _search(ctx, state, texts)
    if state is not None and state.shown and page.state is not None:
        page.state = keep_shown(page.state, state.shown)
    return page


def keep_shown(state: CursorState, shown: Iterable[int]) -> CursorState:
    """``state`` with the positions of ``shown`` (items a relevance search returned out of
    position order) that its next pages may still meet: those below where it reads on."""
    top = max(state.pos, state.after or 0, state.skip or 0)
    return msgspec.structs.replace(state, shown=tuple(sorted(p for p in set(shown) if p < top)))


def _search(ctx: Ctx, state: CursorState | None, texts: dict[str, PageText]) -> Page:
    find = search_finder(ctx)
    prefilter = search_prefilter(ctx)
    shown = frozenset(state.shown) if state is not None else frozenset()
    start = (
        BackState(ctx.end) if state is None else BackState(state.pos, state.skip, state.skip_marker)
    )
    held = [held_hit(e) for e in state.held] if state is not None else []
    # the window the rows above ``kb`` are in, when the cursor knows it
    known = state.kw if state is not None else None
    known_at = state.kb if state is not None else 0
    hot = prefilter.hot if prefilter is not None else None
    reader = BackwardReader(ctx.segments(), start, ctx.budget, hot)
    resolved: list[Hit] = []
    pending: list[Hit] = []
    resume = start
    # the limit is reached; read on only to learn the pending hits' window
    resolving = len(held) >= ctx.req.limit
    gather = gathered(ctx)
    chars = 0  # the text of the hits gathered
    last_boundary: RawLine | None = None
    boundary_window: str | None = None
    done = False
    stopped = False  # the limit is reached with every hit's window known
    if resolving and all(h.window is not None for h in held):
        stopped = True
    for line in [] if stopped else reader:
        if line.quiet and not line.marker:  # what classify says of it: SKIP
            if not resolving:
                resume = BackState(line.start)
            continue
        seen = classify(line, prefilter)
        if seen.kind is Kind.ITEM and seen.item is not None:
            if resolving:
                continue
            span = None if line.start in shown else find(seen.item.text)
            if span is not None and _wanted_row(ctx, seen):
                hit = Hit(line, seen.item, span[0], span[1])
                if known is not None and line.start > known_at:
                    hit.window = known
                    resolved.append(hit)
                else:
                    pending.append(hit)
                item = seen.item
                texts[item.item_id] = (item.text, item.machine, line.start, line.end)
                chars += len(item.text)
                count = len(held) + len(resolved) + len(pending)
                if count >= ctx.req.limit and (count >= gather or chars >= GATHER_CHARS):
                    resolving = True
                    if not pending and all(h.window is not None for h in held):
                        stopped = True
                        break
            resume = BackState(line.start)
        elif seen.kind in (Kind.BOUNDARY, Kind.FLOOR):
            for hit in (*held, *pending):
                hit.window = hit.window or seen.window_id
            resolved.extend(pending)
            pending = []
            last_boundary = line
            boundary_window = seen.window_id
            if resolving:
                break
            if seen.kind is Kind.FLOOR:
                done = True
                break
            resume = BackState(line.start)
        elif not resolving:
            resume = BackState(line.start)
    else:
        if stopped:
            pass
        elif reader.exhausted:
            if pending and last_boundary is not None:
                pending = []  # re-read from the boundary next time, when its window is known
                resume = BackState(last_boundary.start)
            elif last_boundary is None and (pending or held):
                # no boundary yet: the hits wait in the cursor until their window is known
                hits = [*held, *resolved, *pending]
                if ctx.req.relevance:
                    hits = best_first(ctx, held, [*resolved, *pending], texts)
                keep = [{**hold(ctx, h), "windowId": h.window} for h in hits]
                at = reader.state
                after = state.after if state is not None else None
                fresh = [h for h in (*resolved, *pending) if h.line is not None]
                if resolving and fresh and fresh[-1].line is not None:
                    after = fresh[-1].line.start
                elif not resolving and len(keep) >= ctx.req.limit:
                    # a relevance page gathered past the limit and searched every line down
                    # to ``resume``: the next calls, the held hits filling their page, only
                    # look for the boundary, then go on from there
                    after = resume.pos
                return Page(
                    [],
                    ctx.state(
                        phase="back",
                        pos=at.pos,
                        skip=at.skip_end,
                        skip_marker=at.skip_marker,
                        held=keep,
                        after=after,
                        **_known(ctx, BackState(at.pos), None, None, state),
                    ),
                    NOTE_MORE,
                )
            elif not resolving:
                resume = reader.state
        else:
            for hit in (*held, *pending):
                hit.window = hit.window or ROOT_WINDOW_ID
            done = not resolving
    hits = held + resolved + pending
    if ctx.req.relevance:
        then = resuming(ctx, state, hits, resolving, (resume, last_boundary, boundary_window))
        return _ranked_page(ctx, held, [*resolved, *pending], texts, done=done, then=then)
    entries: list[dict[str, Any]] = []
    for index, hit in enumerate(hits):
        entry = fit_hit(ctx, hit, find)
        if entry is None and hit.line is None:
            # the held hits not returned wait (their window now known), and the next page
            # goes on where they were found: nothing read after them is skipped (issue 26)
            rest = [{**hold(ctx, h), "windowId": h.window} for h in hits[index:] if h.line is None]
            after = state.after if state is not None else None
            at = BackState(after) if after is not None else start
            return Page(
                entries,
                msgspec.structs.replace(
                    back_state(ctx, at),
                    held=rest,
                    after=None,
                    **_known(ctx, at, last_boundary, boundary_window, state),
                ),
            )
        if entry is None:
            assert hit.line is not None
            at = BackState(hit.line.end)
            return Page(
                entries,
                msgspec.structs.replace(
                    back_state(ctx, at), **_known(ctx, at, last_boundary, boundary_window, state)
                ),
            )
        entries.append(entry)
    if done:
        return Page(entries, None)
    return more(
        entries, resuming(ctx, state, hits, resolving, (resume, last_boundary, boundary_window))
    )


def resuming(
    ctx: Ctx,
    state: CursorState | None,
    hits: list[Hit],
    resolving: bool,
    at: tuple[BackState, RawLine | None, str | None],
) -> CursorState:
    """Where the next page reads on once every hit of this one is answered or held: below
    the oldest hit it read when it gathered all it would, else where its reading stopped
    (``at``: that place, the last boundary it met and that boundary's window)."""
    resume, boundary, window = at
    fresh = [h for h in hits if h.line is not None]
    if resolving and fresh:
        assert fresh[-1].line is not None
        resume = BackState(fresh[-1].line.start)
    elif resolving and state is not None and state.after is not None:
        resume = BackState(state.after)  # the held hits filled the page: go on after them
    return msgspec.structs.replace(
        back_state(ctx, resume), **_known(ctx, resume, boundary, window, state)
    )


def _ranked_page(
    ctx: Ctx,
    held: list[Hit],
    fresh: list[Hit],
    texts: dict[str, PageText],
    *,
    done: bool,
    then: CursorState,
) -> Page:
    """A relevance page: the hits held from the page before first (ranked there, best
    first), then this page's own ranked among themselves (R39,
    :func:`~segue._retrieval.ranking.rank`); the best ``limit`` that fit are the answer and
    the rest wait in the cursor, in that order, with its window (``then``: where reading
    goes on once they are answered)."""
    find = search_finder(ctx)
    order = best_first(ctx, held, fresh, texts)
    entries: list[dict[str, Any]] = []
    rest: list[dict[str, Any]] = []
    for index, hit in enumerate(order):
        entry = fit_hit(ctx, hit, find) if len(entries) < ctx.req.limit else None
        if entry is None:
            rest = [{**hold(ctx, h), "windowId": h.window} for h in order[index:]]
            break
        entries.append(entry)
    if done and not rest:
        return Page(entries, None)
    return more(entries, msgspec.structs.replace(then, held=rest, after=None))


def held_page(
    ctx: Ctx, held: list[dict[str, Any]], window: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Hits a scan cursor held while their window was unknown, ``window`` now known for
    those still without one (an index knows it): the entries that fit this page, in order,
    and the held hits that wait for the next (with their window)."""
    find = search_finder(ctx)
    known = [{**e, "windowId": e.get("windowId") or window} for e in held]
    entries: list[dict[str, Any]] = []
    for index, entry in enumerate(known):
        fitted = fit_hit(ctx, held_hit(entry), find) if len(entries) < ctx.req.limit else None
        if fitted is None:
            return entries, known[index:]
        entries.append(fitted)
    return entries, []


# -- locate (list_items, read_item) --------------------------------------------------------


@dataclass
class _Found:
    line: RawLine
    seen: Seen


def locate(
    ctx: Ctx, state: CursorState | None, wanted: Callable[[Seen], bool], not_found: PageFailure
) -> tuple[_Found | None, BackState, bool]:
    """Newest-first scan for the first line ``wanted`` accepts, stopping at a floor that is not
    itself wanted. Returns (found, resume state, reached the start of history)."""
    start = (
        BackState(ctx.end) if state is None else BackState(state.pos, state.skip, state.skip_marker)
    )
    reader = BackwardReader(ctx.segments(), start, ctx.budget)
    for line in reader:
        seen = classify(line)
        if wanted(seen):
            return _Found(line, seen), BackState(line.start), False
        if seen.kind is Kind.FLOOR:
            raise not_found
    if reader.exhausted:
        return None, reader.state, False
    return None, BackState(0), True


# -- list_items --------------------------------------------------------------------------


def list_items(ctx: Ctx, state: CursorState | None) -> Page:
    target = ctx.req.key
    if state is None or state.phase == "back":
        missing = PageFailure("window_not_found", f"no window {target!r} above the privacy floor")

        def wanted(seen: Seen) -> bool:
            return seen.kind in (Kind.BOUNDARY, Kind.FLOOR) and seen.window_id == target

        found, at, at_start = locate(ctx, state, wanted, missing)
        if found is not None:
            fwd = FwdState(found.line.end)
        elif at_start and target == ROOT_WINDOW_ID:
            fwd = FwdState(0)
        elif at_start:
            raise missing
        else:
            return more([], back_state(ctx, at))
    else:
        fwd = FwdState(state.pos, state.skip, state.skip_marker)
    reader = ForwardReader(ctx.segments(), fwd, ctx.budget)
    entries: list[dict[str, Any]] = []
    for line in reader:
        seen = classify(line)
        if seen.kind in (Kind.BOUNDARY, Kind.FLOOR):
            return Page(entries, None)
        if seen.kind is Kind.ITEM and seen.item is not None and _wanted_row(ctx, seen):
            entry = item_entry(seen.item, target, preview(seen.item.text, ctx.req.max_chars))
            if len(entries) >= ctx.req.limit or not ctx.fits(entry):
                return Page(entries, fwd_state(ctx, FwdState(line.start)))
            entries.append(entry)
    if reader.exhausted:
        return more(entries, fwd_state(ctx, reader.state))
    return Page(entries, None)


def fwd_state(ctx: Ctx, at: FwdState) -> CursorState:
    return ctx.state(phase="fwd", pos=at.pos, skip=at.skip_start, skip_marker=at.skip_marker)


# -- read_item ---------------------------------------------------------------------------


def item_matches(item: Item, wanted: str) -> bool:
    """``N`` names the row with that sequence; ``m:<id>`` names a row by its id, with or
    without a sequence (the way to reach one of several rows sharing a reused sequence)."""
    if item.item_id == wanted:
        return True
    return wanted.startswith("m:") and item.row_id == wanted[2:]
