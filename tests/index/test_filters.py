"""R36 filters and order, stated directly (the property test checks the index against the
scan; this checks what both must say), for the index and for the bounded scan."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from segue._messages import Part, encode_row, make_row
from segue._retrieval import SessionHistoryTool
from segue._retrieval.index_build import rebuild
from segue._workspace import Layout
from tests.retrieval.helpers import encoded, entries, rollover, text_row, write_history

#: a literal search (R23), the default before words search (R39)
LITERAL: dict[str, Any] = {"action": "search", "match": "literal"}

def _tool_row(seq: int, tool: str) -> bytes:
    part = Part(
        type="dynamic-tool",
        toolName=tool,
        toolCallId=f"c{seq}",
        input={"cmd": "ls"},
        state="output-available",
        output="needle output",
    )
    meta = {"historySequence": seq, "timestamp": seq}
    return encode_row(
        make_row("assistant", f"needle call {seq}", id=f"t{seq}", parts=[part], metadata=meta)
    )


@pytest.fixture(params=["index", "scan"])
def tool(request: pytest.FixtureRequest, tmp_path: Path) -> SessionHistoryTool:
    layout = Layout(tmp_path, "ws")
    lines = [
        *encoded([text_row("needle zero", 0), text_row("needle one", 1, role="assistant")]),
        _tool_row(2, "bash"),
        *encoded([rollover(3), text_row("needle four", 4), text_row("needle " + "x" * 900, 5)]),
        _tool_row(6, "file_read"),
        *encoded([text_row("needle seven", 7, role="system")]),
    ]
    write_history(layout, [], lines)
    if request.param == "index":
        rebuild(layout)
        return SessionHistoryTool(layout, build_index=False)
    return SessionHistoryTool(layout, use_index=False)


def _ids(tool: SessionHistoryTool, args: dict[str, Any]) -> list[str]:
    return [e.get("itemId") or e["windowId"] for e in entries(tool, args)]


def test_order(tool: SessionHistoryTool) -> None:
    newest = _ids(tool, {"action": "search", "match": "literal", "query": "needle"})
    assert newest == ["7", "6", "5", "4", "2", "1", "0"]
    assert _ids(tool, {**LITERAL, "query": "needle", "order": "oldest"}) == newest[::-1]
    assert _ids(tool, {"action": "list_windows"}) == ["w:3", "w:0"]
    assert _ids(tool, {"action": "list_windows", "order": "oldest"}) == ["w:0", "w:3"]
    assert _ids(tool, {"action": "list_items", "window_id": "w:3"}) == ["7", "6", "5", "4"]
    oldest = {"action": "list_items", "window_id": "w:3", "order": "oldest", "limit": 1}
    assert _ids(tool, oldest) == ["4", "5", "6", "7"]


def test_role_and_tool_name(tool: SessionHistoryTool) -> None:
    assert _ids(tool, {**LITERAL, "query": "needle", "role": "assistant"}) == [
        "6",
        "2",
        "1",
    ]
    assert _ids(tool, {**LITERAL, "query": "needle", "role": "system"}) == ["7"]
    assert _ids(tool, {**LITERAL, "query": "needle", "tool_name": "bash"}) == ["2"]
    assert _ids(tool, {**LITERAL, "query": "output", "tool_name": "file_read"}) == ["6"]
    assert _ids(tool, {**LITERAL, "query": "needle", "tool_name": "nope"}) == []
    args = {"action": "list_items", "window_id": "w:0", "role": "user"}
    assert _ids(tool, args) == ["0"]


def test_max_chars_per_item(tool: SessionHistoryTool) -> None:
    found = entries(tool, {**LITERAL, "query": "needle x", "max_chars_per_item": 20})
    assert [len(i["text"].strip("…")) for i in found] == [20]
    listed = entries(tool, {"action": "list_items", "window_id": "w:3", "max_chars_per_item": 10})
    assert all(len(i["text"].strip("…")) <= 10 for i in listed)
    assert entries(tool, {**LITERAL, "query": "needle x"})[0]["text"].count("x") == 493
