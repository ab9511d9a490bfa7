"""What one item of a page says: its entry, its snippet cut to fit the result (R24), a
list's preview of it; a search's hits, held in a cursor or ranked best first. Pure."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from segue._retrieval import envelope
from segue._retrieval.project import Item
from segue._retrieval.ranking import PageText, rank
from segue._retrieval.reader import RawLine
from segue._retrieval.schema import Request

#: the snippet sizes a page tries after ``max_chars_per_item``, when a longer one does not fit
SNIPPET_CHARS = (120, 48)


class Fits(Protocol):
    """A page being made (:class:`segue._retrieval.pages.Ctx`): its request, and what room is
    left in its result."""

    req: Request

    def fits(self, entry: dict[str, Any]) -> bool:
        """Whether ``entry`` still fits the page's result."""
        ...


def item_entry(item: Item, window: str | None, text: str) -> dict[str, Any]:
    return {
        "itemId": item.item_id,
        "windowId": window,
        "role": item.role,
        "timestamp": item.timestamp,
        "text": text,
    }


def fit_snippet(
    ctx: Fits, item: Item, window: str | None, start: int, end: int
) -> dict[str, Any] | None:
    """The hit's entry with the longest snippet (``max_chars_per_item``, then shorter) that
    still fits the result; None when none does."""
    for chars in snippet_sizes(ctx.req.max_chars):
        text = envelope.snippet(item.text, start, end, chars)
        entry = item_entry(item, window, text)
        if ctx.fits(entry):
            return entry
    return None


def snippet_sizes(max_chars: int) -> tuple[int, ...]:
    return tuple(sorted({max_chars, *(min(max_chars, c) for c in SNIPPET_CHARS)}, reverse=True))


def preview(text: str, max_chars: int) -> str:
    """The first ``max_chars`` characters of an item (list_items), ``…`` where cut."""
    end = envelope.fit_prefix(text, 0, max_chars, 6 * max_chars)
    return text[:end] + ("…" if end < len(text) else "")


# -- a search's hits --------------------------------------------------------------------


@dataclass
class Hit:
    line: RawLine | None  # None for a hit held over from an earlier page
    item: Item | None
    start: int
    end: int
    window: str | None = None
    held: dict[str, Any] | None = None  # a held hit's entry (text: a snippet of the item)


def hold(ctx: Fits, hit: Hit) -> dict[str, Any]:
    """A hit whose window is not known yet, carried in the cursor's state (never a null
    window id in an answer): its entry at the largest snippet size."""
    if hit.held is not None:
        return hit.held
    assert hit.item is not None
    text = envelope.snippet(hit.item.text, hit.start, hit.end, ctx.req.max_chars)
    return item_entry(hit.item, None, text)


def held_hit(entry: dict[str, Any]) -> Hit:
    """A hit carried in the cursor: its window is known when a page already resolved it."""
    window = entry.get("windowId")
    return Hit(None, None, 0, 0, window if isinstance(window, str) else None, dict(entry))


def best_first(
    ctx: Fits, held: list[Hit], fresh: list[Hit], texts: dict[str, PageText]
) -> list[Hit]:
    """The held hits (ranked by the page before), then ``fresh`` ranked among themselves."""
    docs = [texts[h.item.item_id] if h.item is not None else ("", False, None, None) for h in fresh]
    return [*held, *(fresh[i] for i in rank(ctx.req.key, docs))]


def fit_hit(
    ctx: Fits, hit: Hit, find: Callable[[str], tuple[int, int] | None]
) -> dict[str, Any] | None:
    if hit.held is None:
        assert hit.item is not None
        return fit_snippet(ctx, hit.item, hit.window, hit.start, hit.end)
    text = str(hit.held["text"])
    span = find(text) or (0, 0)
    for chars in snippet_sizes(ctx.req.max_chars):
        entry = {**hit.held, "windowId": hit.window, "text": envelope.snippet(text, *span, chars)}
        if ctx.fits(entry):
            return entry
    return None


#: the hits a relevance page of the scan gathers (newest first, within its bounds) and ranks
#: before it answers the best ``limit`` of them; the others wait in the cursor, best first
GATHER_HITS = 200
#: ... or until their texts hold this many characters, ``limit`` hits at least: ranking
#: reads them all again (a first words call on 4 MB of agent rows, whose items are long:
#: about 25 ms ranking 10 hits, 100-130 ms with this bound, up to 330 ms without it; 70-80 ms
#: with this bound once ranking counted only the query's terms of each hit)
GATHER_CHARS = 256 << 10


def gathered(ctx: Fits) -> int:
    """Hits a page reads before it stops: ``limit`` in position order; for a relevance
    search, :data:`GATHER_HITS`, so the page ranks more than it shows (R39)."""
    return max(ctx.req.limit, GATHER_HITS) if ctx.req.relevance else ctx.req.limit
