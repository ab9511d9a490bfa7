"""Property: over random histories (every floor spelling the tool's own property test builds:
manual resets, malformed rollovers, undecodable lines with the key, oversized lines), the
owner's default view never shows a byte written at or before the newest floor, shows every
visible item above it, and agrees with the model's ``session_history`` on the windows."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import segue
from segue._history import HistoryStore
from segue._retrieval import SessionHistoryTool
from segue._workspace import Layout
from tests.conftest import scaled
from tests.retrieval.helpers import entries, write_history
from tests.retrieval.test_privacy_property import EVENT, HUGE, MARK, build


def _floor(events: list[tuple[str, str]], huge: str | None, huge_at: int) -> int:
    """The line of the newest floor, by how the history was built (-1: none)."""
    items = list(events)
    if huge is not None:
        items.insert(min(huge_at, len(items)), ("huge", huge))
    floors = [n for n, (kind, arg) in enumerate(items)
              if kind in ("reset", "malformed") or (kind in ("garbage", "huge") and arg == "key")]
    return floors[-1] if floors else -1


def _marks(*texts: str) -> set[int]:
    return {int(m) for text in texts for m in MARK.findall(text)}


@settings(max_examples=scaled(60, 600), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(events=st.lists(EVENT, max_size=30), split=st.integers(0, 30), huge=HUGE,
       huge_at=st.integers(0, 30))
def test_the_owner_view_keeps_the_floor(
    events: list[tuple[str, str]], split: int, huge: str | None, huge_at: int
) -> None:
    lines, visible, _ = build(events, huge, huge_at)
    floor = _floor(events, huge, huge_at)
    cleared = set(range(floor + 1))
    with tempfile.TemporaryDirectory() as tmp:
        layout = Layout(Path(tmp), "prop")
        cut = min(split, len(lines))
        write_history(layout, lines[:cut], lines[cut:])
        history = segue.History(layout, HistoryStore(layout))
        windows = history.windows()
        model = entries(SessionHistoryTool(layout), {"action": "list_windows", "order": "oldest"})
        assert [(w.window_id, w.kind) for w in windows] == [
            (w["windowId"], w["kind"]) for w in model]
        shown: set[int] = set()
        for window in windows:
            items = history.items(window.window_id)
            shown |= _marks(*(i.text for i in items))
            for item in items:
                shown |= _marks(*(i.text for i in history.read(item.item_id)))
        hits = history.search("mk")
        shown |= _marks(*(h.snippet for h in hits))
        assert not shown & cleared
        assert visible <= shown  # everything the model may see, the owner sees too
        everything = segue.History(layout, HistoryStore(layout), include_cleared=True)
        assert visible <= _marks(*(h.snippet for h in everything.search("mk")))
