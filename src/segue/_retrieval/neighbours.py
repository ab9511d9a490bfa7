"""``read_item`` with ``context: n`` (R39): the item and the n items before and after it in
its window, within the call's bounds (R24) and the 16 KiB result.

Written once over any backend's view: the neighbours are the window's own ``list_items``
pages, read from the item's place outward (newest first before it, oldest first after it)
in the same snapshot and against the same scan budget as the item, so they obey the floor,
the projection and the bounds exactly as ``list_items`` does. Where the budget ends first,
or the result has no room, fewer neighbours come and a note says so.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import msgspec

from segue._retrieval import envelope, pages
from segue._retrieval.cursor import CursorState
from segue._retrieval.schema import MAX_LIMIT

if TYPE_CHECKING:
    from segue._retrieval.backends import View

NOTE_PARTIAL = (
    "Fewer neighbouring items than asked for fit this call's bounds; list_items of the "
    "window shows the rest."
)
#: neighbours' text: list_items previews, narrower when the result needs the room
_PREVIEWS = (500, 120, 48)


def with_context(view: View, ctx: pages.Ctx, page: pages.Page) -> pages.Page:
    """``page`` (the item's first page) with its neighbours around it, in window order.

    A backend's read_item page names the located row's place in its window (``page.near``):
    the neighbours are read from there, away from the item, so only they are read. Without
    it the window is walked from its start and the item is the first entry of its id; when
    the walk does not meet it within the budget, no neighbours come, and a note says so."""
    n = ctx.req.context
    item = page.entries[0]
    if page.near is not None:
        newest, oldest = page.near
        back, complete_b = _from(view, ctx, item, newest, order="newest", n=n)
        after, complete_a = _from(view, ctx, item, oldest, order="oldest", n=n)
        before, found, complete = list(reversed(back)), True, complete_b and complete_a
    else:
        found, complete, before, after = _walk(view, ctx, item, n=n)
    if not found:
        return pages.Page([item], page.state, page.note or NOTE_PARTIAL)
    chosen = _fit(ctx, page, before, after)
    entries = [*chosen[0], item, *chosen[1]]
    short = not complete or len(chosen[0]) < len(before) or len(chosen[1]) < len(after)
    return pages.Page(entries, page.state, (page.note or NOTE_PARTIAL) if short else page.note)


def _pages(
    view: View, ctx: pages.Ctx, item: dict[str, Any], state: CursorState | None, *,
    order: str, limit: int = MAX_LIMIT,
) -> Iterator[pages.Page]:
    """The item's window's list_items pages in ``order`` from ``state`` (None: its first) of
    ``limit`` entries, in the call's snapshot and against its budget, until none remains or
    the budget ends."""
    req = dataclasses.replace(
        ctx.req, action="list_items", key=str(item["windowId"]), limit=limit,
        order=order, cursor=None, context=0, max_chars=_PREVIEWS[0],
    )
    base = msgspec.structs.replace(ctx.base, act="list_items")
    for _ in range(64):  # each page reads at least a row or stops: this only guards
        got = view.page(pages.Ctx(view.layout, ctx.snap, ctx.budget, req, base), state)
        yield got
        if got.state is None:
            return
        if not got.entries and (ctx.budget.rows_left == 0 or ctx.budget.bytes_left == 0):
            return
        state = got.state


def _from(
    view: View, ctx: pages.Ctx, item: dict[str, Any], state: CursorState, *, order: str, n: int
) -> tuple[list[dict[str, Any]], bool]:
    """Up to ``n`` entries read from ``state`` (a place next to the item) away from it,
    nearest first, and whether the budget cut none."""
    got: list[dict[str, Any]] = []
    if n == 0:
        return got, True
    for page in _pages(view, ctx, item, state, order=order, limit=min(n, MAX_LIMIT)):
        got += page.entries[: n - len(got)]
        if len(got) >= n or page.state is None:
            return got, True
    return got, False


def _walk(
    view: View, ctx: pages.Ctx, item: dict[str, Any], *, n: int
) -> tuple[bool, bool, list[dict[str, Any]], list[dict[str, Any]]]:
    """The window walked oldest first from its start: (the item was met, the budget cut
    nothing, the n entries before it, the n after it)."""
    before: deque[dict[str, Any]] = deque(maxlen=n)
    after: list[dict[str, Any]] = []
    found = False
    for page in _pages(view, ctx, item, None, order="oldest"):
        for entry in page.entries:
            if found:
                after.append(entry)
                if len(after) >= n:
                    return True, True, list(before), after
            elif entry["itemId"] == item["itemId"]:
                found = True
            else:
                before.append(entry)
        if page.state is None:
            return found, True, list(before), after
    return found, False, list(before), after


def _fit(
    ctx: pages.Ctx, page: pages.Page, before: list[dict[str, Any]], after: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The neighbours that fit the result, nearest first, with the widest previews that do."""
    room = envelope.MAX_RESULT - ctx.used
    for chars in _PREVIEWS:
        near = [*zip(reversed(before), after, strict=False)]
        order: list[tuple[str, dict[str, Any]]] = []
        for b, a in near:
            order += [("b", b), ("a", a)]
        rest = before[: len(before) - len(near)] if len(before) > len(after) else []
        order += [("b", e) for e in reversed(rest)]
        order += [("a", e) for e in after[len(near):]]
        kept_b: list[dict[str, Any]] = []
        kept_a: list[dict[str, Any]] = []
        used = 0
        for side, entry in order:
            cut = {**entry, "text": _cut(str(entry["text"]), chars)}
            size = envelope.entry_size(cut)
            if used + size > room:
                break
            used += size
            (kept_b if side == "b" else kept_a).append(cut)
        if len(kept_b) + len(kept_a) == len(before) + len(after) or chars == _PREVIEWS[-1]:
            return list(reversed(kept_b)), kept_a
    return [], []


def _cut(text: str, chars: int) -> str:
    body = text.removesuffix("…")
    cut = body != text
    if len(body) > chars:
        body, cut = body[:chars], True
    return body + ("…" if cut else "")
