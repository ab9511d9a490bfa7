"""``read_item`` with ``context: n`` (R39): the item and the n items before and after it in
its window, within the call's bounds (R24) and the 16 KiB result.

Written once over any backend's view: the neighbours are the window's own ``list_items``
pages, read oldest first in the same snapshot and against the same scan budget as the item,
so they obey the floor, the projection and the bounds exactly as ``list_items`` does. Where
the budget ends first, or the result has no room, fewer neighbours come and a note says so.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from typing import TYPE_CHECKING, Any

import msgspec

from segue._retrieval import envelope, pages
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
    """``page`` (the item's first page) with its neighbours around it, in window order."""
    n = ctx.req.context
    item = page.entries[0]
    before: deque[dict[str, Any]] = deque(maxlen=n)
    after: list[dict[str, Any]] = []
    found, complete = _walk(view, ctx, item, before, after, n=n)
    chosen = _fit(ctx, page, list(before), after)
    entries = [*chosen[0], item, *chosen[1]]
    short = not complete or len(chosen[0]) < len(before) or len(chosen[1]) < len(after)
    note = page.note if not short or not found else (page.note or NOTE_PARTIAL)
    return pages.Page(entries, page.state, note)


def _walk(
    view: View,
    ctx: pages.Ctx,
    item: dict[str, Any],
    before: deque[dict[str, Any]],
    after: list[dict[str, Any]],
    *,
    n: int,
) -> tuple[bool, bool]:
    """Fill ``before`` and ``after``: (the item was met, nothing was cut by the budget)."""
    req = dataclasses.replace(
        ctx.req, action="list_items", key=str(item["windowId"]), limit=MAX_LIMIT,
        order="oldest", cursor=None, context=0, max_chars=_PREVIEWS[0],
    )
    base = msgspec.structs.replace(ctx.base, act="list_items")
    state = None
    found = False
    for _ in range(64):  # each page reads at least a row or stops: this only guards
        lctx = pages.Ctx(view.layout, ctx.snap, ctx.budget, req, base)
        got = view.page(lctx, state)
        for entry in got.entries:
            if found:
                after.append(entry)
                if len(after) >= n:
                    return True, True
            elif _is_item(entry, item):
                found = True
            else:
                before.append(entry)
        if got.state is None:
            return found, True
        if not got.entries and (ctx.budget.rows_left == 0 or ctx.budget.bytes_left == 0):
            return found, False
        state = got.state
    return found, False


def _is_item(entry: dict[str, Any], item: dict[str, Any]) -> bool:
    if entry["itemId"] != item["itemId"]:
        return False
    preview = str(entry["text"]).removesuffix("…")
    return str(item["text"]).startswith(preview) or preview.startswith(str(item["text"]))


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
