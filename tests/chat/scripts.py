"""Scripted turns that the line chat's and the full-screen chat's tests both play, so the two
fronts are tested on the same conversation."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import segue

MEMORY_LIST = {"name": "memory", "input": {"action": "list"}}

#: The child workspace of the first task the parent ``ws`` starts.
CHILD = "ws.t1"
#: What the child's first (quick, settled) step prints, and the parent later finds.
CLUE = "compiled-ok-7431"


def bash_step(command: str) -> dict[str, Any]:
    return {"toolCalls": [{"name": "bash", "input": {"command": command}}]}


def write_interrupted_turn(path: Path, request_log: Path) -> Path:
    """Two tool steps and an answer, each step logged to ``request_log`` (a request gate):
    a turn cancelled after step 1 or 2 never reaches its answer, and the next message then
    reaches ``FOLLOW-UP`` either way."""
    path.write_text(json.dumps({
        "contextWindow": 8000,
        "encoding": "o200k_base",
        "requestLog": str(request_log),
        "responses": [
            {"text": "", "toolCalls": [MEMORY_LIST]},
            {"text": "", "toolCalls": [MEMORY_LIST]},
            {"text": "FOLLOW-UP"},
        ],
    }))
    return path


def check_interrupted_turn(rows: Sequence[segue.Row]) -> None:
    """The transcript after the interrupted turn of :func:`write_interrupted_turn` ("go"),
    then "carry on": each settled step is durable (its tool call with its result), the
    unsettled one is not, and the next message got ``FOLLOW-UP``."""
    users = [i for i, r in enumerate(rows) if r.role == "user"]
    assert [rows[i].text for i in users] == ["go", "carry on"]
    interrupted = rows[users[0] + 1 : users[1]]
    assert 1 <= len(interrupted) <= 2
    for row in interrupted:
        (part,) = row.parts
        assert part.type == "dynamic-tool"
        assert part.state == "output-available"
        assert part.output is not None
    assert rows[-1].text == "FOLLOW-UP"


#: A parent that delegates to a task whose second step is slow (so a Ctrl-C can stop it), then
#: reads the stopped task's history with ``task_id`` and runs a slow step of its own. The slow
#: steps write marker files (``child-started``, ``parent-started``) a test can poll for.
TASK_STOP_RESPONSES: list[dict[str, Any]] = [
    # the parent delegates
    {"toolCalls": [{"name": "task",
                    "input": {"agent": "exec", "prompt": "build it and wait for it"}}]},
    # the child: one quick step that settles, then a slow one
    bash_step(f"echo {CLUE}"),
    bash_step("touch child-started && sleep 60"),
    # the parent goes on: it reads the stopped task's history with task_id …
    {"toolCalls": [{"name": "session_history", "input": {
        "action": "search", "query": CLUE, "match": "literal", "task_id": CHILD}}]},
    # … then runs a slow step of its own
    bash_step("touch parent-started && sleep 60"),
]
