"""A task's own Ctrl-C in a real terminal (SPEC.md R40, R41): while a sub-agent's task runs,
the first Ctrl-C stops the child only (its settled steps stay in its transcript), the task's
result tells the parent the user stopped it, and the parent's turn goes on; a Ctrl-C when no
task runs stops the parent's turn as it always did. The slow steps are ``sleep`` commands
that the test waits for through the marker files they write (polled, never a fixed sleep)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("termios")

from segue import HistoryStore, Layout
from tests.chat.scripts import CHILD, CLUE, TASK_STOP_RESPONSES
from tests.chat.terminal import Terminal
from tests.front import read_rows, task_link

WORKSPACE = "ws"
DEADLINE = 30.0


def _script(tmp: Path) -> Path:
    path = tmp / "task-stop.json"
    path.write_text(json.dumps({
        "contextWindow": 32000, "encoding": "o200k_base", "requestLog": str(tmp / "log.jsonl"),
        "responses": TASK_STOP_RESPONSES,
    }))
    return path


def _wait_for(path: Path) -> None:
    deadline = time.monotonic() + DEADLINE
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.02)


def _requests(tmp: Path) -> list[dict[str, Any]]:
    return read_rows(tmp / "log.jsonl")


def _outputs(home: Path, workspace: str) -> list[tuple[str, Any]]:
    rows = HistoryStore(Layout(home, workspace), durable=False).rows()
    return [(p.toolName or "", p.output) for r in rows for p in r.parts
            if p.type == "dynamic-tool"]


def test_ctrl_c_stops_the_task_then_the_turn_in_the_line_chat(
    tmp_path: Path, terminals: list[Terminal]
) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("SEGUE_HOME", "NO_COLOR")}
    env.update(TERM="xterm", LANG="C.UTF-8", LC_ALL="C.UTF-8")
    # session_history (and so task_id) comes with the token-budget experiment
    subprocess.run([sys.executable, "-m", "segue", "--home", str(home), "settings", "set",
                    "experiments.tokenBudget", "true"], check=True, env=env, cwd=work,
                   capture_output=True, timeout=60)
    t = Terminal([sys.executable, "-m", "segue", "--home", str(home), "-w", WORKSPACE, "chat",
                  "-m", f"scripted:{_script(tmp_path)}", "--approve", "full"],
                 cwd=work, env=env)
    terminals.append(t)
    t.expect(r"› ")
    t.type("build the project")
    t.expect(rf"\[segue\] task {CHILD} \(exec\) started")
    _wait_for(work / "child-started")  # the child is in its slow step

    t.send("\x03")
    t.expect(rf"\[segue\] stopping task {CHILD} \(exec\); the turn goes on")
    t.expect(rf"\[segue\] task {CHILD} \(exec\) paused: stopped by the user")
    _wait_for(work / "parent-started")  # the parent's turn went on past the task

    t.send("\x03")  # no task runs now: this one stops the parent's turn
    t.expect(r"\[segue\] interrupting: stopping the turn")
    t.expect(r"\[segue\] turn interrupted; the steps that settled are kept")
    t.expect(r"› ")
    t.send("\x04")
    assert t.wait_exit() == 0

    # The parent's step after the task saw the task's result: stopped by the user, its id.
    after_task = _requests(tmp_path)[3]
    assert "the user stopped this task" in json.dumps(after_task["messages"])
    parent = _outputs(home, WORKSPACE)
    assert [name for name, _ in parent] == ["task", "session_history", "bash"]
    task_result = parent[0][1]
    assert task_result["ok"] is False and task_result["taskId"] == CHILD
    assert task_result["error"]["code"] == "task_stopped"
    # … and looked back into the stopped task with task_id: its settled step is there.
    assert CLUE in json.dumps(parent[1][1])
    # The child's transcript holds both of its steps: the quick one, and the slow one
    # (its command killed when the task stopped, its result settled all the same).
    child = _outputs(home, CHILD)
    assert [name for name, _ in child] == ["bash", "bash"]
    assert CLUE in json.dumps(child[0][1])
    assert child[1][1]["error"]["code"] == "interrupted"
    link = task_link(home, CHILD)
    assert (link["parent"], link["status"]) == ("ws", "paused")
    # The parent's own slow step was stopped by the second Ctrl-C, and settled too.
    assert parent[2][1]["error"]["code"] == "interrupted"


def test_ctrl_c_in_segue_run_stops_the_task_and_its_turn_and_exits_130(
    tmp_path: Path, terminals: list[Terminal]
) -> None:
    """``segue run`` has nobody to go on for: R40's Ctrl-C stops the whole run (the task and
    the turn that started it) and exits 130, with every settled step of both kept."""
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("SEGUE_HOME", "NO_COLOR")}
    env.update(TERM="xterm", LANG="C.UTF-8", LC_ALL="C.UTF-8")
    t = Terminal([sys.executable, "-m", "segue", "--home", str(home), "-w", WORKSPACE, "run",
                  "-m", f"scripted:{_script(tmp_path)}", "--approve", "full",
                  "build the project"], cwd=work, env=env)
    terminals.append(t)
    t.expect(rf"\[segue\] task {CHILD} \(exec\) started")
    _wait_for(work / "child-started")
    t.send("\x03")
    t.expect(r"segue: interrupted")
    assert t.wait_exit() == 130
    assert "stopping task" not in t.text
    assert len(_requests(tmp_path)) == 3  # the parent made no step after the task
    child = _outputs(home, CHILD)
    assert [name for name, _ in child] == ["bash", "bash"]
    assert child[1][1]["error"]["code"] == "interrupted"
    parent = _outputs(home, WORKSPACE)
    assert [name for name, _ in parent] == ["task"]
    assert parent[0][1]["taskId"] == CHILD and parent[0][1]["error"]["code"] == "task_incomplete"
