"""``read_item`` with ``context`` (R39): the located item's real neighbours in its window,
read from where the item is, on the scan and on the index — with ``offset_chars`` (the
item's text then does not start where its preview does), and in a window of 2,000 items
(a walk from the window's start would spend R24's 500 rows before reaching it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from segue._messages import encode_row
from segue._retrieval import SessionHistoryTool
from segue._retrieval.index_build import rebuild
from segue._retrieval.neighbours import NOTE_PARTIAL
from segue._workspace import Layout
from tests.retrieval.helpers import call, rollover, text_row, write_history

STORES = ["scan", "index"]


def _tool(tmp_path: Path, rows: list[Any], store: str) -> SessionHistoryTool:
    layout = Layout(tmp_path, "ws")
    write_history(layout, [], [encode_row(r) for r in rows])
    if store == "index":
        rebuild(layout)
    return SessionHistoryTool(layout, use_index=store == "index")


def _read(tool: SessionHistoryTool, args: dict[str, Any]) -> dict[str, Any]:
    """The page that shows the item, following cursors while the scan still locates it."""
    page = call(tool, args)
    while page["ok"] and not page["items"] and page["nextCursor"] is not None:
        page = call(tool, {**args, "cursor": page["nextCursor"]})
    assert page["ok"], page
    return page


@pytest.mark.parametrize("store", STORES)
def test_neighbours_with_offset_chars(tmp_path: Path, store: str) -> None:
    rows = [text_row(f"old {i}", i) for i in range(2)] + [rollover(2)]
    rows += [text_row(f"item {i} " + "word " * 60, i) for i in range(3, 15)]
    tool = _tool(tmp_path, rows, store)
    got = _read(tool, {"action": "read_item", "item_id": "8", "context": 2, "offset_chars": 100})
    assert [i["itemId"] for i in got["items"]] == ["6", "7", "8", "9", "10"]
    assert got["items"][2]["text"] == ("item 8 " + "word " * 60)[100:]
    assert got.get("note") is None
    first = _read(tool, {"action": "read_item", "item_id": "3", "context": 3})
    assert [i["itemId"] for i in first["items"]] == ["3", "4", "5", "6"]  # not w:0's rows


@pytest.mark.parametrize("store", STORES)
def test_neighbours_in_a_window_of_two_thousand_items(tmp_path: Path, store: str) -> None:
    rows = [text_row("before the window", 0), rollover(1)]
    rows += [text_row(f"item {i}", i) for i in range(2, 2002)]
    tool = _tool(tmp_path, rows, store)
    for wanted in ("1990", "40", "2001"):
        got = _read(tool, {"action": "read_item", "item_id": wanted, "context": 2})
        n = int(wanted)
        want = [str(i) for i in range(max(n - 2, 2), min(n + 3, 2002))]
        assert [i["itemId"] for i in got["items"]] == want, wanted
        assert got.get("note") is None
        assert all(i["windowId"] == got["items"][0]["windowId"] for i in got["items"])
    if store == "index":  # only the item and its neighbours are read (R35)
        assert call(tool, {"action": "read_item", "item_id": "1000",
                           "context": 2})["scanned"]["rows"] == 5


@pytest.mark.parametrize("store", STORES)
def test_neighbours_the_budget_cuts_are_noted(tmp_path: Path, store: str) -> None:
    rows = [rollover(0)] + [text_row(f"item {i}", i) for i in range(1, 40)]
    layout = Layout(tmp_path, "ws")
    write_history(layout, [], [encode_row(r) for r in rows])
    if store == "index":
        rebuild(layout)
    tool = SessionHistoryTool(layout, use_index=store == "index", max_rows=3)
    got = call(tool, {"action": "read_item", "item_id": "39", "context": 5})
    page = got
    while page["ok"] and not page["items"] and page["nextCursor"] is not None:
        page = call(tool, {"action": "read_item", "item_id": "39", "context": 5,
                           "cursor": page["nextCursor"]})
    ids = [i["itemId"] for i in page["items"]]
    assert "39" in ids and len(ids) < 6
    assert ids == [str(i) for i in range(40 - len(ids), 40)]
    assert page["note"] == NOTE_PARTIAL
