"""Sub-agents in the chats (R41): the line chat and the full-screen chat's lines say when a
task starts and when it ends, with its id, agent and where its history is."""

from __future__ import annotations

from pathlib import Path

from segue import TaskFinished, TaskStarted
from segue._render.lines import event_lines
from tests.chat.helpers import chat


def test_the_line_chat_shows_a_task_start_and_end(tmp_path: Path) -> None:
    c = chat(tmp_path, [
        {"toolCalls": [{"name": "task", "input": {"agent": "explore", "prompt": "map it"}}]},
        {"text": "mapped"},
        {"text": "thanks"},
    ])
    status, _ = c.run(["delegate this"])
    assert status == 0
    lines = c.text.splitlines()
    started = lines.index("[segue] task ws.t1 (explore) started: map it")
    ended = next(i for i, line in enumerate(lines)
                 if line.startswith("[segue] task ws.t1 (explore) completed · 0 rollovers"))
    assert started < ended
    assert "task ws.t1 (explore) done · 0 rollovers" in c.text  # the tool result line
    assert "mapped" in c.text  # the child's report, in the task's result line
    assert c.rows()[0].text == "delegate this"


def test_the_full_screen_chat_lines_of_a_task() -> None:
    [start] = event_lines(TaskStarted("ws.t2", "plan", "draft\nthe plan"))
    [end] = event_lines(TaskFinished("ws.t2", "plan", "paused", "the window is full", 1))
    assert start.text == "[segue] task ws.t2 (plan) started: draft the plan"
    assert end.text == ("[segue] task ws.t2 (plan) paused: the window is full · 1 rollover · its "
                        "history: segue -w ws.t2 history windows")
    assert start.kind == end.kind == "segue"  # machine messages, never the model's words
