"""A task's own Ctrl-C in the full-screen chat (SPEC.md R40, R41), with Textual's pilot and
the scripted provider: the status line names the running task and what Ctrl-C will stop; the
first Ctrl-C stops the child only (its settled steps stay), the parent's turn reads that
result and goes on; a Ctrl-C when no task runs stops the parent's turn. The slow steps are
``sleep`` commands, waited for through the marker files they write."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from segue import HistoryStore, Layout
from segue._tui.app import ChatApp
from tests.chat.helpers import chat
from tests.chat.scripts import CHILD, CLUE, TASK_STOP_RESPONSES
from tests.front import task_link
from tests.tui.helpers import at_prompt, run_app, shows, submit, until


def _outputs(home: Path, workspace: str) -> list[tuple[str, Any]]:
    rows = HistoryStore(Layout(home, workspace), durable=False).rows()
    return [(p.toolName or "", p.output) for r in rows for p in r.parts
            if p.type == "dynamic-tool"]


def test_ctrl_c_stops_the_task_then_the_turn_in_the_full_screen_chat(tmp_path: Path) -> None:
    c = chat(tmp_path, TASK_STOP_RESPONSES, context_window=32000)
    c.settings(approval="full", experiments={"tokenBudget": True})
    work = c.tmp / "work"
    seen: dict[str, str] = {}

    async def scenario(app: ChatApp, pilot: Pilot[int]) -> None:
        await at_prompt(pilot, app, 1)
        await submit(pilot, "build the project")
        await until(pilot, lambda: (work / "child-started").exists()
                    and f"task {CHILD} (exec) running" in app.status_text)
        seen["during the task"] = app.status_text
        await pilot.press("ctrl+c")
        await until(pilot, lambda: shows(app, "segue", f"stopping task {CHILD} (exec)"))
        await until(pilot, lambda: (work / "parent-started").exists()
                    and f"task {CHILD}" not in app.status_text)
        seen["after the task"] = app.status_text
        await pilot.press("ctrl+c")  # no task runs: this stops the parent's turn
        await at_prompt(pilot, app, 2)
        await until(pilot, lambda: shows(app, "segue", "turn interrupted"))
        await pilot.press("ctrl+d")

    run_app(c, scenario)

    assert seen["during the task"].startswith(f"● task {CHILD} (exec) running ")
    assert "Ctrl-C stops the task" in seen["during the task"]
    assert seen["after the task"].startswith("● running bash")
    home = c.layout.home
    parent = _outputs(home, "ws")
    assert [name for name, _ in parent] == ["task", "session_history", "bash"]
    task_result = parent[0][1]
    assert task_result["ok"] is False and task_result["taskId"] == CHILD
    assert task_result["error"]["code"] == "task_stopped"
    assert CLUE in json.dumps(parent[1][1])  # the parent read the stopped task's history
    assert parent[2][1]["error"]["code"] == "interrupted"  # the second Ctrl-C
    child = _outputs(home, CHILD)
    assert [name for name, _ in child] == ["bash", "bash"]
    assert CLUE in json.dumps(child[0][1]) and child[1][1]["error"]["code"] == "interrupted"
    link = task_link(home, CHILD)
    assert (link["parent"], link["status"]) == ("ws", "paused")
