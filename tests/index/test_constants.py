"""SPEC.md §6's numbers, pinned as numbers (not read back from the code under test), and
seen through the tool's answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from segue._retrieval import (
    MAX_RESULT,
    MAX_SCAN_BYTES,
    MAX_SCAN_ROWS,
    SessionHistoryTool,
    cursor,
    reader,
    schema,
)
from segue._retrieval.envelope import serialize
from segue._workspace import Layout
from tests.retrieval.helpers import encoded, pages, rollover, text_row, write_history


def test_numbers() -> None:
    assert MAX_RESULT == 16_384
    assert MAX_SCAN_BYTES == 2_097_152
    assert MAX_SCAN_ROWS == 500
    assert reader.MAX_LINE == 1_048_576
    assert (schema.DEFAULT_LIMIT, schema.MAX_LIMIT, schema.MAX_WINDOWS) == (10, 25, 50)
    assert schema.DEFAULT_MAX_CHARS == 500
    assert cursor.MAX_CURSOR == 256


@pytest.fixture
def tool(tmp_path: Path) -> SessionHistoryTool:
    layout = Layout(tmp_path, "ws")
    rows = [text_row("needle " + "x" * 3000 + f" {i}", i) for i in range(60)]
    rows += [rollover(100 + w) for w in range(60)]
    write_history(layout, [], encoded(rows))
    return SessionHistoryTool(layout)


@pytest.mark.parametrize(
    ("args", "ok"),
    [
        ({"action": "search", "query": "needle", "limit": 25}, True),
        ({"action": "search", "query": "needle", "limit": 26}, False),
        ({"action": "list_items", "window_id": "w:0", "limit": 25}, True),
        ({"action": "list_items", "window_id": "w:0", "limit": 26}, False),
        ({"action": "list_windows", "limit": 50}, True),
        ({"action": "list_windows", "limit": 51}, False),
    ],
)
def test_limits(tool: SessionHistoryTool, args: dict[str, Any], ok: bool) -> None:
    result = tool.call(args)
    assert result["ok"] is ok, result
    if not ok:
        assert result["error"]["code"] == "invalid_argument"


def test_defaults_and_bounds(tool: SessionHistoryTool) -> None:
    first = tool.call({"action": "search", "query": "needle"})
    assert len(first["items"]) == 10  # default limit
    assert all(len(i["text"].strip("…")) <= 500 for i in first["items"])  # default snippet
    assert max(len(i["text"].strip("…")) for i in first["items"]) == 500
    windows = tool.call({"action": "list_windows", "limit": 50})
    assert len(windows["windows"]) == 50
    for args in (
        {"action": "search", "query": "needle", "limit": 25, "max_chars_per_item": 4000},
        {"action": "list_windows", "limit": 50},
        {"action": "list_items", "window_id": "w:0", "limit": 25, "max_chars_per_item": 4000},
        {"action": "read_item", "item_id": "3", "limit_chars": 12000},
    ):
        for page in pages(tool, args):
            assert len(serialize(page)) <= 16_384
            assert len(page["nextCursor"] or "") <= 256
            assert page["scanned"]["bytes"] <= 2_097_152 and page["scanned"]["rows"] <= 500


def test_filters_an_action_cannot_honour(tool: SessionHistoryTool) -> None:
    for args in (
        {"action": "read_item", "item_id": "1", "role": "user"},
        {"action": "read_item", "item_id": "1", "order": "oldest"},
        {"action": "list_windows", "tool_name": "bash"},
        {"action": "list_windows", "max_chars_per_item": 5},
    ):
        result = tool.call(args)
        assert result["error"]["code"] == "filters_unsupported", args
