"""A manual reset appended by an untracked writer *while a page is being read* (R26, R30).

The page holds the store's shared lock, but a writer that ignores the lock can still append
to ``chat.jsonl`` between two rows the page reads. The page's own read stops at the
snapshot's end, so it never sees that reset: every row it has gathered is now below the
newest floor. The snapshot taken again after the page differs from the one before, so the
page is dropped (``history_changed``) instead of returning those rows. The next call honours
the new floor: a fresh query finds nothing below it, and the old cursor is stale (nobody
vouched for the untracked growth).

The append is made deterministically in the middle of the page: ``classify`` (what both the
bounded scan and the index pages call on each row they read) is wrapped so that, after the
page has read a few rows, it appends the reset once and carries on.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from segue._context.boundaries import ROOT_WINDOW_ID
from segue._context.rollover import manual_reset_row
from segue._history import HistoryStore
from segue._messages import encode_row, make_row
from segue._retrieval import SessionHistoryTool, index_pages, pages, pages_order
from segue._retrieval.index_build import rebuild
from segue._workspace import Layout

ROWS = 12


def _history(tmp_path: Path, indexed: bool) -> Layout:
    layout = Layout(tmp_path, "ws")
    store = HistoryStore(layout, durable=False)
    store.append([make_row("user", f"old row {i} needle", id=f"a{i}") for i in range(ROWS)])
    if indexed:
        rebuild(layout)
    return layout


def _append_reset(layout: Layout) -> None:
    """A plain file append, not through the store: an untracked writer."""
    with open(layout.chat, "ab") as f:
        f.write(encode_row(manual_reset_row(row_id="late-reset", now_ms=1)) + b"\n")


class _MidPage:
    """Wraps ``classify`` in the scan and index page modules; appends the reset once, after
    ``after_rows`` rows were classified, and records which module was reading."""

    def __init__(self, layout: Layout, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
        self.layout = layout
        self.after_rows = AFTER_ROWS[name]
        self.seen = 0
        self.fired_in: str | None = None
        for module in (pages, pages_order, index_pages):
            monkeypatch.setattr(module, "classify", self._wrap(module.classify, module.__name__))

    def _wrap(self, real: Callable[..., Any], where: str) -> Callable[..., Any]:
        def classify(*args: Any, **kwargs: Any) -> Any:
            result = real(*args, **kwargs)
            self.seen += 1
            if self.seen == self.after_rows and self.fired_in is None:
                self.fired_in = where
                _append_reset(self.layout)
            return result

        return classify


def _ids(answer: dict[str, Any]) -> list[str]:
    return [str(e["itemId"]) for e in answer.get("items", [])]


CALLS: dict[str, dict[str, Any]] = {
    # a literal search's next page reads on; a words search's next page here answers from
    # the hits its first page ranked and held, reading no row for a reset to land among
    "search": {"action": "search", "query": "needle", "limit": 4, "match": "literal"},
    "search-words": {"action": "search", "query": "needle", "limit": 4},
    "search-oldest": {"action": "search", "query": "needle", "limit": 4, "order": "oldest"},
    "list_items": {"action": "list_items", "window_id": ROOT_WINDOW_ID, "limit": 4},
    "read_item": {"action": "read_item", "item_id": "m:a5"},
}
#: rows the page reads before the untracked reset lands (an indexed read_item reads just the
#: one row it located)
AFTER_ROWS = {"search": 2, "search-words": 2, "search-oldest": 2, "list_items": 2, "read_item": 1}
#: what a fresh call answers once the reset hides every old row
AFTER_FLOOR = {
    "search": None,
    "search-words": None,
    "search-oldest": None,
    "list_items": "window_not_found",
    "read_item": "item_not_found",
}


def _expect_floor_honoured(tool: SessionHistoryTool, name: str) -> None:
    answer = tool.call(CALLS[name])
    code = AFTER_FLOOR[name]
    if code is None:
        assert answer["ok"], answer
        assert _ids(answer) == [] and answer["nextCursor"] is None
    else:
        assert not answer["ok"] and answer["error"]["code"] == code, answer


@pytest.mark.parametrize("indexed", [False, True], ids=["scan", "index"])
@pytest.mark.parametrize("name", sorted(CALLS))
def test_reset_appended_during_a_first_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, indexed: bool
) -> None:
    layout = _history(tmp_path, indexed)
    tool = SessionHistoryTool(layout, use_index=indexed)
    hook = _MidPage(layout, monkeypatch, name)
    answer = tool.call(CALLS[name])
    assert hook.fired_in is not None
    assert (hook.fired_in == index_pages.__name__) is indexed, hook.fired_in
    assert tool.index_problem is None  # the index path really answered (or the scan was asked)
    assert not answer["ok"] and answer["error"]["code"] == "history_changed", answer
    assert "items" not in answer
    _expect_floor_honoured(tool, name)


@pytest.mark.parametrize("indexed", [False, True], ids=["scan", "index"])
@pytest.mark.parametrize("name", ["list_items", "search", "search-oldest"])
def test_reset_appended_during_a_continuation_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, indexed: bool
) -> None:
    layout = _history(tmp_path, indexed)
    tool = SessionHistoryTool(layout, use_index=indexed)
    first = tool.call(CALLS[name])
    assert first["ok"] and len(_ids(first)) == 4 and first["nextCursor"], first
    cursor = first["nextCursor"]
    hook = _MidPage(layout, monkeypatch, name)
    answer = tool.call({**CALLS[name], "cursor": cursor})
    assert hook.fired_in is not None
    assert (hook.fired_in == index_pages.__name__) is indexed, hook.fired_in
    assert tool.index_problem is None
    assert not answer["ok"] and answer["error"]["code"] == "history_changed", answer
    assert "items" not in answer
    # the old cursor cannot go on below the new floor, and a new query finds nothing there
    again = tool.call({**CALLS[name], "cursor": cursor})
    assert not again["ok"] and again["error"]["code"] == "stale_cursor", again
    _expect_floor_honoured(tool, name)
