"""Recorded agent runs converted to rows: shapes, tool pairing, errors, packaged data."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from segue import decode_row, encode_row
from segue._demo.trajectory import (
    DEFAULT_START_MS,
    iter_packaged_rows,
    load_packaged,
    packaged_license,
    packaged_names,
    parse_trajectory,
    trajectory_rows,
)
from segue._errors import TrajectoryFormatError


def _call(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


FUNCTION_CALLING: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a programmer."},
    {"role": "user", "content": "Fix the bug."},
    {
        "role": "assistant",
        "content": "Let me look.",
        "tool_calls": [
            _call("c1", "bash", {"command": "ls"}),
            _call("c2", "open", {"path": "a.py"}),
        ],
    },
    {"role": "tool", "content": "a.py\nb.py", "tool_call_ids": ["c1"]},
    {"role": "tool", "content": "1: x = 1", "tool_call_ids": ["c2"]},
    {"role": "assistant", "content": "Done."},
]


def test_function_calling_pairs_calls_with_results_in_one_assistant_row() -> None:
    rows = trajectory_rows(FUNCTION_CALLING, prefix="t", start_ms=1000, step_ms=10)
    assert [r.role for r in rows] == ["system", "user", "assistant", "assistant"]
    assert [r.id for r in rows] == ["t-0", "t-1", "t-2", "t-3"]
    assert [r.timestamp for r in rows] == [1000, 1010, 1020, 1030]
    text, ls, open_ = rows[2].parts
    assert (text.type, text.text) == ("text", "Let me look.")
    assert (ls.type, ls.toolCallId, ls.toolName, ls.input) == (
        "dynamic-tool",
        "c1",
        "bash",
        {"command": "ls"},
    )
    assert (ls.state, ls.output) == ("output-available", "a.py\nb.py")
    assert (open_.toolName, open_.output, open_.state) == ("open", "1: x = 1", "output-available")
    assert all(r.sequence is None and r.workspaceId is None for r in rows)


def test_rows_round_trip_through_the_codec() -> None:
    for row in trajectory_rows(FUNCTION_CALLING, prefix="t"):
        assert decode_row(encode_row(row)) == row


def test_a_call_without_result_stays_input_available() -> None:
    rows = trajectory_rows(FUNCTION_CALLING[:3], prefix="t")
    assert [p.state for p in rows[-1].parts[1:]] == ["input-available", "input-available"]
    assert rows[-1].parts[1].output is None


@pytest.mark.parametrize(
    ("messages", "message"),
    [
        ([{"role": "tool", "content": "x", "tool_call_ids": ["nope"]}], "unknown call"),
        (
            [
                {"role": "assistant", "content": "", "tool_calls": [_call("c", "bash", {})]},
                {"role": "tool", "content": "x", "tool_call_ids": ["c"]},
                {"role": "tool", "content": "y", "tool_call_ids": ["c"]},
            ],
            "second result",
        ),
        ([{"role": "tool", "content": "x"}], "one tool_call_id"),
        (
            [
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {"id": "c", "function": {"name": "bash", "arguments": "{not json"}}
                    ],
                }
            ],
            "not JSON",
        ),
        ([{"role": "robot", "content": "x"}], "unknown role"),
        ([{"role": "user", "content": 5}], "content must be text"),
    ],
)
def test_malformed_trajectories_are_refused(messages: list[dict[str, Any]], message: str) -> None:
    with pytest.raises(TrajectoryFormatError, match=message):
        trajectory_rows(messages, prefix="t")


OLD_STYLE: list[dict[str, Any]] = [
    {"role": "system", "content": "sys"},
    {"role": "user", "content": "Demo:\n```\nls\n```", "is_demo": True},
    {"role": "user", "content": "Solve the task."},
    {
        "role": "assistant",
        "content": "Check files.\n```\nls -a\n```",
        "thought": "Check files.\n",
        "action": "ls -a\n",
    },
    {"role": "user", "content": ".\n..\nrelease"},
    {
        "role": "assistant",
        "content": "Submit.\n```\nsubmit\n```",
        "thought": "Submit.",
        "action": "submit",
    },
]


def test_old_style_actions_stay_text_by_default() -> None:
    rows = trajectory_rows(OLD_STYLE, prefix="o")
    assert [r.role for r in rows] == ["system", "user", "user", "assistant", "user", "assistant"]
    assert rows[3].text == OLD_STYLE[3]["content"]


def test_old_style_actions_as_tools() -> None:
    rows = trajectory_rows(OLD_STYLE, prefix="o", actions_as_tools=True)
    assert [r.role for r in rows] == ["system", "user", "user", "assistant", "assistant"]
    thought, call = rows[3].parts
    assert thought.text == "Check files."
    assert (call.toolName, call.input, call.output) == (
        "bash",
        {"command": "ls -a"},
        ".\n..\nrelease",
    )
    # the final action has no observation after it: it stays ordinary text
    assert rows[4].text == OLD_STYLE[5]["content"]


def test_parse_refuses_documents_without_history() -> None:
    with pytest.raises(TrajectoryFormatError, match="not JSON"):
        parse_trajectory(b"{", "x")
    with pytest.raises(TrajectoryFormatError, match="history"):
        parse_trajectory(b'{"trajectory": []}', "x")


def test_packaged_trajectories_load_and_convert() -> None:
    names = packaged_names()
    assert len(names) >= 3
    assert "MIT License" in packaged_license()
    for name in names:
        traj = load_packaged(name)
        assert traj.messages
        for actions in (False, True):
            rows = trajectory_rows(traj.messages, prefix="p", actions_as_tools=actions)
            assert rows[0].role == "system"
            assert sum(len(r.text) for r in rows) > 1000
    with pytest.raises(TrajectoryFormatError, match="available"):
        load_packaged("no-such-run")


def test_iter_packaged_rows_has_unique_ids_and_increasing_timestamps() -> None:
    rows = list(iter_packaged_rows(actions_as_tools=True))
    assert len({r.id for r in rows}) == len(rows)
    stamps = [r.timestamp for r in rows]
    assert stamps[0] == DEFAULT_START_MS
    assert all(a is not None and b is not None and a < b for a, b in itertools.pairwise(stamps))
    assert any(p.type == "dynamic-tool" for r in rows for p in r.parts)
