"""Actions, projection, argument errors, read_item paging and the command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from segue._messages import Part, encode_row, make_row
from segue._retrieval import TOOL_SCHEMA, SessionHistoryTool
from segue._workspace import Layout
from tests.retrieval.helpers import (
    call,
    encoded,
    entries,
    manual_reset,
    rollover,
    text_row,
    write_history,
)

#: a literal search (R23), the default before words search (R39)
LITERAL: dict[str, Any] = {"action": "search", "match": "literal"}

def tool_for(home: Path, lines: list[bytes], ws: str = "act") -> SessionHistoryTool:
    layout = Layout(home, ws)
    write_history(layout, [], lines)
    return SessionHistoryTool(layout)


@pytest.mark.parametrize(
    ("args", "code"),
    [
        ({}, "invalid_argument"),
        ({"action": "nope"}, "invalid_argument"),
        ({"action": "search", "match": "literal"}, "query_required"),
        ({"action": "search", "match": "literal", "query": ""}, "query_required"),
        ({"action": "read_item"}, "item_id_required"),
        ({"action": "list_items"}, "invalid_argument"),
        ({"action": "list_windows", "limit": 0}, "invalid_argument"),
        ({"action": "list_windows", "limit": "5"}, "invalid_argument"),
        ({"action": "list_windows", "limit": True}, "invalid_argument"),
        ({"action": "list_windows", "query": "x"}, "invalid_argument"),
        ({"action": "list_windows", "bogus": 1}, "invalid_argument"),
        ({"action": "read_item", "item_id": "1", "offset_chars": -1}, "invalid_argument"),
        ({"action": "list_items", "window_id": "w:404"}, "window_not_found"),
        ({"action": "read_item", "item_id": "404"}, "item_not_found"),
    ],
)
def test_argument_errors(segue_home: Path, args: dict[str, Any], code: str) -> None:
    tool = tool_for(segue_home, encoded([text_row("a", 0)]))
    result = call(tool, args)
    assert result == {"ok": False, "error": {"code": code, "message": result["error"]["message"]}}


def test_schema_names_every_argument() -> None:
    assert set(TOOL_SCHEMA["properties"]) == {
        "match",
        "context",
        "action",
        "window_id",
        "query",
        "item_id",
        "cursor",
        "limit",
        "offset_chars",
        "limit_chars",
        "role",
        "tool_name",
        "order",
        "max_chars_per_item",
        "task_id",  # R41
    }


def test_projection_hides_what_r25_hides(segue_home: Path) -> None:
    parts = [
        Part(type="reasoning", text="SECRET-THOUGHT"),
        Part(type="text", text="visible words"),
        Part(type="file", mediaType="image/png", url="data:image/png;base64,AAAA"),
        Part(
            type="dynamic-tool",
            toolName="session_history",
            toolCallId="a",
            state="output-available",
            input={"action": "search", "match": "literal"},
            output="OLD-RESULT",
        ),
        Part(
            type="dynamic-tool",
            toolName="bash",
            toolCallId="b",
            state="output-available",
            input={"cmd": "ls"},
            output={
                "type": "content",
                "value": [
                    {"type": "text", "text": "a.txt"},
                    {"type": "media", "data": "QUJD", "mediaType": "image/png"},
                ],
            },
        ),
    ]
    row = make_row(
        "assistant",
        id="r",
        parts=parts,
        metadata={"historySequence": 0, "providerMetadata": {"x": "PROVIDER-META"}},
    )
    lead_in = make_row(
        "user",
        "LEAD-IN",
        id="l",
        metadata={"historySequence": 1, "synthetic": True, "uiVisible": False},
    )
    rejected = make_row(
        "assistant",
        id="q",
        metadata={
            "historySequence": 2,
            "contextBudgetRejected": True,
            "contextBudgetRejectedMessage": {
                "role": "user",
                "parts": [{"type": "text", "text": "REJECTED"}],
            },
        },
    )
    tool = tool_for(segue_home, [encode_row(r) for r in (row, lead_in, rejected)])
    items = entries(tool, {"action": "list_items", "window_id": "w:0"})
    assert [i["itemId"] for i in items] == ["0"]
    text = call(tool, {"action": "read_item", "item_id": "0"})["items"][0]["text"]
    assert "visible words" in text and "[media omitted]" in text and "a.txt" in text
    assert "[tool bash]" in text
    for hidden in ("SECRET-THOUGHT", "OLD-RESULT", "PROVIDER-META", "QUJD", "AAAA"):
        assert hidden not in text
    for hidden in ("LEAD-IN", "REJECTED"):
        assert entries(tool, {"action": "search", "match": "literal", "query": hidden}) == []


def test_read_item_pages_by_code_point(segue_home: Path) -> None:
    text = ('ab😀\u0001"é\\' * 3000) + "\ud800 lone" * 50
    tool = tool_for(segue_home, [encode_row(text_row(text, 0))])
    got = ""
    offset = 0
    cursor = None
    while True:
        args: dict[str, Any] = {"action": "read_item", "item_id": "0", "limit_chars": 12000}
        if cursor is not None:
            args["cursor"] = cursor
        result = call(tool, args)
        item = result["items"][0]
        got += item["text"]
        assert item["totalChars"] == len(text)
        if item["nextCharOffset"] is None:
            assert result["nextCursor"] is None
            break
        assert item["nextCharOffset"] == len(got) > offset
        offset = item["nextCharOffset"]
        cursor = result["nextCursor"]
    assert got == text
    # offset_chars without a cursor starts there
    mid = call(tool, {"action": "read_item", "item_id": "0", "offset_chars": 2, "limit_chars": 1})
    assert mid["items"][0]["text"] == "😀"


def test_reused_sequences_are_kept_and_addressable(segue_home: Path) -> None:
    rows = [text_row("first copy", 5, rid="a"), text_row("second copy", 5, rid="b")]
    tool = tool_for(segue_home, encoded(rows))
    assert [i["itemId"] for i in entries(tool, {**LITERAL, "query": "copy"})] == ["5", "5"]
    newest = call(tool, {"action": "read_item", "item_id": "5"})["items"][0]
    assert newest["text"] == "second copy"
    older = call(tool, {"action": "read_item", "item_id": "m:a"})["items"][0]
    assert older["text"] == "first copy"


def test_windows_and_floor(segue_home: Path) -> None:
    lines = encoded(
        [
            text_row("root text", 0),
            rollover(1),
            text_row("after rollover", 2),
            manual_reset(3),
            text_row("after reset", 4),
            rollover(5),
            text_row("newest", 6),
        ]
    )
    tool = tool_for(segue_home, lines)
    windows = entries(tool, {"action": "list_windows"})
    assert [(w["windowId"], w["kind"], w["items"]) for w in windows] == [
        ("w:5", "rollover", 1),
        ("w:3", "reset", 1),
    ]
    assert call(tool, {"action": "list_items", "window_id": "w:0"})["error"]["code"] == (
        "window_not_found"
    )
    assert call(tool, {"action": "list_items", "window_id": "w:1"})["error"]["code"] == (
        "window_not_found"
    )
    items = entries(tool, {"action": "list_items", "window_id": "w:3"})
    assert [i["text"] for i in items] == ["after reset"]
    hits = entries(tool, {"action": "search", "match": "literal", "query": "AFTER"})
    assert [(h["itemId"], h["windowId"]) for h in hits] == [("4", "w:3")]


def test_cli_answers_line_by_line(segue_home: Path) -> None:
    write_history(
        Layout(segue_home, "cli"), [], encoded([text_row(f"line {i}", i) for i in range(5)])
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "segue", "-w", "cli", "history", "tool"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**os.environ, "SEGUE_HOME": str(segue_home)},
    )
    assert proc.stdin is not None and proc.stdout is not None
    seen: list[str] = []
    args: dict[str, Any] = {"action": "search", "match": "literal", "query": "line", "limit": 2}
    while True:
        proc.stdin.write(json.dumps(args).encode() + b"\n")
        proc.stdin.flush()
        answer = json.loads(proc.stdout.readline())  # answered before the next line is sent
        seen += [i["itemId"] for i in answer["items"]]
        if answer["nextCursor"] is None:
            break
        args = {**args, "cursor": answer["nextCursor"]}
    proc.stdin.close()
    assert proc.wait() == 0
    proc.stdout.close()
    assert seen == ["4", "3", "2", "1", "0"]


@pytest.mark.parametrize(
    "query",
    [
        "cmd: ls -la",  # a tool input as a person reads it; the raw line is JSON
        "[tool bash]",  # segue's own words around a name from the raw line
        "exit code: 2",  # letters, digits and punctuation
        "Ünïcode façade",  # non-ASCII around an ASCII letter run
    ],
)
def test_search_with_punctuation_finds_re_rendered_text(segue_home: Path, query: str) -> None:
    """Queries that are not a plain word are prefiltered by their longest letter run; the
    prefilter must never drop a line whose projection holds the query."""
    raw = (
        b'{"id":"t","role":"assistant","metadata":{"historySequence":0},"parts":'
        b'[{"type":"dynamic-tool","toolCallId":"c","toolName":"bash","state":"output-available",'
        b'"input": {"cmd": "ls -la", "cwd": "/tmp"},"output":"exit code: 2"}]}'
    )
    text = encode_row(
        make_row(
            "user", "an \u00dcn\u00efcode fa\u00e7ade", id="u", metadata={"historySequence": 1}
        )
    )
    filler = [
        encode_row(
            make_row("user", f"unrelated {i}", id=f"f{i}", metadata={"historySequence": 2 + i})
        )
        for i in range(5)
    ]
    result = tool_for(segue_home, [raw, text, *filler]).call({**LITERAL, "query": query})
    assert result["ok"] is True, result
    assert len(result["items"]) == 1, result
