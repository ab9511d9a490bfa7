"""Ctrl-C at a task's approval question (SPEC.md R38, R41): the question a child's call asks
is answered no, and the Ctrl-C is the task's own: the child stops, the parent's turn goes on
with the stopped task's result."""

from __future__ import annotations

from pathlib import Path

from segue import HistoryStore, Layout
from tests.chat.helpers import CTRL_C, chat


def test_ctrl_c_at_a_tasks_approval_question_stops_the_task_only(tmp_path: Path) -> None:
    c = chat(tmp_path, [
        {"toolCalls": [{"name": "task", "input": {"agent": "exec", "prompt": "clean up"}}]},
        {"toolCalls": [{"name": "bash", "input": {"command": "rm -rf build"}}]},
        {"text": "the task was stopped; nothing was removed"},
    ])
    status, keyboard = c.run(["tidy the tree", CTRL_C], interactive=True)
    assert status == 0
    assert keyboard.prompts[1] == "Allow? [y/N/a] "  # the child's call asked
    assert "[segue] stopping task ws.t1 (exec); the turn goes on" in c.text
    assert "turn interrupted" not in c.text
    rows = c.rows()
    assert rows[-1].role == "assistant"
    assert rows[-1].text == "the task was stopped; nothing was removed"  # the turn went on
    [result] = [p.output for r in rows for p in r.parts if p.toolName == "task"]
    assert result["error"]["code"] == "task_stopped" and result["taskId"] == "ws.t1"
    child = HistoryStore(Layout(c.layout.home, "ws.t1"), durable=False).rows()
    [denied] = [p.output for r in child for p in r.parts if p.toolName == "bash"]
    assert denied["error"]["code"] == "approval_denied"
