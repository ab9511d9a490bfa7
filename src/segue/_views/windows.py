"""Windows and items for people: one forward pass over rows, bounded by what it keeps.

The window and item objects are those of SPEC.md §4 (``{"windowId", "kind", "firstItemId",
"lastItemId", "items"}`` and ``{"itemId", "windowId", "role", "timestamp", "text"}``), but over
the whole transcript: the user's own data has no privacy floor and no page bounds. In a window
object ``items`` is the number of items; the items themselves are listed per window.

Invariants:

* :func:`walk` yields a :class:`WindowStart` for the root window first, then, in transcript
  order, one per boundary and an :class:`Item` per visible row. It keeps nothing but the
  current window, so memory does not grow with the history.
* Window ids and kinds come from :mod:`segue._context.boundaries`, the same rules that decide
  rotation and retrieval, so the views never disagree with the engine.
* Reused sequence numbers (R27) are kept: two items may share an id and both are shown.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from segue._context.boundaries import (
    ROOT_WINDOW_ID,
    WindowKind,
    boundary_kind,
    is_boundary,
    is_compaction_boundary,
    item_id,
    window_id_of_boundary,
)
from segue._errors import UsageError
from segue._messages import Row
from segue._views.project import Display, display, is_hidden

#: ``w:raw:<n>``: a window a floor opens that is not a readable row (the model's tool names it
#: by the floor's end position, and so does a reader that starts at the floor).
_WINDOW_ID_RE = re.compile(r"w:(0|[0-9]+|m:.+|raw:[0-9]+)", re.DOTALL)


@dataclass(frozen=True)
class WindowStart:
    window_id: str
    kind: WindowKind
    boundary: Row | None


@dataclass(frozen=True)
class Item:
    item_id: str
    window_id: str
    row: Row
    view: Display

    @property
    def text(self) -> str:
        return self.view.text

    def to_obj(self) -> dict[str, Any]:
        return {
            "itemId": self.item_id,
            "windowId": self.window_id,
            "role": self.view.role,
            "timestamp": self.row.timestamp,
            "text": self.view.text,
        }


@dataclass(frozen=True)
class WindowSummary:
    window_id: str
    kind: WindowKind
    boundary: Row | None
    first_item_id: str | None
    last_item_id: str | None
    items: int
    #: When the window began: its boundary's timestamp, else its first item's (not in to_obj:
    #: the SPEC object has no such field).
    started_ms: int | None = None

    def to_obj(self) -> dict[str, Any]:
        return {
            "windowId": self.window_id,
            "kind": self.kind,
            "firstItemId": self.first_item_id,
            "lastItemId": self.last_item_id,
            "items": self.items,
        }


Event = WindowStart | Item


ROOT = WindowStart(ROOT_WINDOW_ID, "root", None)


def walk(rows: Iterable[Row], start: WindowStart = ROOT) -> Iterator[Event]:
    """Window starts and visible items, in transcript order (see the module docstring).
    ``start``: the window the first row belongs to (a reader that begins at a floor)."""
    window_id = start.window_id
    yield start
    for row in rows:
        if is_boundary(row):
            window_id = window_id_of_boundary(row)
            yield WindowStart(window_id, boundary_kind(row), row)
            if not is_compaction_boundary(row):
                continue  # a reset row opens its window without belonging to it
        if not is_hidden(row):
            yield Item(item_id(row), window_id, row, display(row))


def window_summaries(rows: Iterable[Row], first_window: WindowStart = ROOT) -> list[WindowSummary]:
    """Every window, oldest first, with its item count and first/last item ids."""
    out: list[WindowSummary] = []
    start: WindowStart | None = None
    first: str | None = None
    last: str | None = None
    started: int | None = None
    count = 0

    def close() -> None:
        if start is not None:
            out.append(
                WindowSummary(
                    start.window_id, start.kind, start.boundary, first, last, count, started
                )
            )

    for event in walk(rows, first_window):
        if isinstance(event, WindowStart):
            close()
            start, first, last, count = event, None, None, 0
            started = event.boundary.timestamp if event.boundary is not None else None
        else:
            if first is None:
                first = event.item_id
                started = started if started is not None else event.row.timestamp
            last = event.item_id
            count += 1
    close()
    return out


def check_window_id(window_id: str) -> str:
    """Refuse a string that cannot be a window id (``w:0``, ``w:<n>``, ``w:m:<row id>``)."""
    if not _WINDOW_ID_RE.fullmatch(window_id):
        head = f"invalid window id {window_id!r}: expected w:0, w:<item id> "
        raise UsageError(
            head + "(the ids of the workspace's windows)",
            cli=head + "(see `segue history windows`)",
        )
    return window_id


def window_items(
    rows: Iterable[Row], window_id: str, start: WindowStart = ROOT
) -> list[Item] | None:
    """The items of one window (of every window with that id, should sequences repeat),
    or None when no such window exists."""
    check_window_id(window_id)
    found = False
    inside = False
    items: list[Item] = []
    for event in walk(rows, start):
        if isinstance(event, WindowStart):
            inside = event.window_id == window_id
            found = found or inside
        elif inside:
            items.append(event)
    return items if found else None


def find_items(rows: Iterable[Row], wanted: str, start: WindowStart = ROOT) -> list[Item]:
    """Every visible item with this id (several when a sequence was reused, R27)."""
    return [e for e in walk(rows, start) if isinstance(e, Item) and e.item_id == wanted]


@dataclass(frozen=True)
class Hit:
    item: Item
    matches: int
    snippet: str


def search(
    rows: Iterable[Row], query: str, *, context: int = 60, start: WindowStart = ROOT
) -> Iterator[Hit]:
    """Items whose displayed text contains ``query`` (literal, case-insensitive)."""
    if not query:
        raise UsageError("the search query must not be empty")
    pattern = re.compile(re.escape(query), re.IGNORECASE)
    for event in walk(rows, start):
        if not isinstance(event, Item):
            continue
        text = event.text
        matches = list(pattern.finditer(text))
        if matches:
            first = matches[0]
            yield Hit(event, len(matches), snippet(text, first.start(), first.end(), context))


def snippet(text: str, start: int, end: int, context: int) -> str:
    """``text[start:end]`` with up to ``context`` characters either side, on one line.

    Python strings index code points, so a snippet never splits one.
    """
    lo = max(0, start - context)
    hi = min(len(text), end + context)
    body = " ".join(text[lo:hi].split())
    return ("…" if lo > 0 else "") + body + ("…" if hi < len(text) else "")
