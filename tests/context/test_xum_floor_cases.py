"""Two cases ported from Xum's own session_history tests (R11): a clean line is judged by its
decoded value, so the reset key or value elsewhere than the row's own kind hides nothing;
a rollover boundary is judged by the fields Xum's validator names only."""

from __future__ import annotations

import json
from pathlib import Path

from segue import Layout, SessionHistoryTool
from tests.retrieval.helpers import encoded, entries, rollover, text_row, write_history


def _texts(tmp: Path, middle: bytes) -> list[str]:
    layout = Layout(tmp, "ws")
    before, after = encoded([text_row("recovery row EARLY", 0), text_row("LATE", 2)])
    write_history(layout, [], [before, middle, after])
    tool = SessionHistoryTool(layout)
    return [i["text"] for i in entries(tool, {"action": "search", "query": "EARLY"})]


def test_a_readable_structured_tool_result_containing_reset_data_does_not_hide_earlier_rows(
    tmp_path: Path,
) -> None:
    part = {"type": "dynamic-tool", "toolName": "fetch", "toolCallId": "t1",
            "state": "output-available",
            "input": {"contextBoundaryKind": "reset", "value": "tool facts"},
            "output": {"contextBoundaryKind": "reset"}}
    row = {"id": "t", "role": "assistant", "parts": [part], "metadata": {"historySequence": 1}}
    assert _texts(tmp_path, json.dumps(row).encode()) == ["recovery row EARLY"]


def test_valid_non_reset_fields_cannot_be_joined_by_the_malformed_token_recognizer(
    tmp_path: Path,
) -> None:
    row = {"id": "n", "role": "assistant", "parts": [],
           "metadata": {"contextBoundaryKind": "normal", "other": "reset", "historySequence": 1}}
    assert _texts(tmp_path, json.dumps(row).encode()) == ["recovery row EARLY"]


def test_a_rollover_boundary_ignores_keys_the_validator_does_not_name(tmp_path: Path) -> None:
    obj = json.loads(encoded([rollover(1)])[0])
    obj["metadata"].update(synthetic=True, uiVisible=False)
    assert _texts(tmp_path, json.dumps(obj).encode()) == ["recovery row EARLY"]


def test_the_same_key_as_a_duplicate_still_hides_earlier_rows(tmp_path: Path) -> None:
    line = (b'{"id":"n","role":"assistant","parts":[],"metadata":{"contextBoundaryKind":"normal",'
            b'"other":"reset","contextBoundaryKind":"normal"}}')
    assert _texts(tmp_path, line) == []
