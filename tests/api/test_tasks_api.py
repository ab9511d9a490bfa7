"""Sub-agents through the library (R41): the task events, ``segue.list_tasks``, the model's
view with ``task_id``, how deep tasks nest, and a stopped turn stopping its child."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import segue
from segue._history import HistoryStore
from segue._workspace import Layout

WS = "lib"


def script(tmp: Path, responses: list[dict[str, Any]]) -> str:
    path = tmp / "script.json"
    path.write_text(json.dumps({"contextWindow": 16000, "encoding": "o200k_base",
                                "responses": responses}))
    return f"scripted:{path}"


def task(agent: str, prompt: str) -> dict[str, Any]:
    return {"toolCalls": [{"name": "task", "input": {"agent": agent, "prompt": prompt}}]}


def open_session(tmp: Path, responses: list[dict[str, Any]], **kw: Any) -> segue.Session:
    work = tmp / "work"
    work.mkdir(exist_ok=True)
    return segue.open_session(WS, home=tmp / "home", workdir=work, model=script(tmp, responses),
                              experiment=True, **kw)


def test_events_tasks_and_the_models_view(tmp_path: Path) -> None:
    with open_session(tmp_path, [task("explore", "find the owner"),
                                 {"text": "the owner is Ada"}, {"text": "Ada"}]) as session:
        turn = session.stream("who owns it?")
        events = list(turn)
        assert turn.result.status == "completed"
        kinds = [type(e).__name__ for e in events
                 if isinstance(e, segue.ToolStarted | segue.ToolFinished | segue.TaskStarted
                               | segue.TaskFinished)]
        assert kinds == ["ToolStarted", "TaskStarted", "TaskFinished", "ToolFinished"]
        finished = next(e for e in events if isinstance(e, segue.TaskFinished))
        assert (finished.task_id, finished.agent, finished.status) == (f"{WS}.t1", "explore",
                                                                       "completed")
        [info] = segue.list_tasks(session)
        assert (info.task_id, info.parent, info.agent, info.prompt, info.status, info.depth) == (
            f"{WS}.t1", WS, "explore", "find the owner", "completed", 1)
        assert segue.list_tasks(WS, home=tmp_path / "home") == [info]
        assert segue.list_tasks(f"{WS}.t1", home=tmp_path / "home") == []
        with segue.open_history(session) as history:
            found = history.as_model().call({"action": "search", "query": "Ada",
                                             "task_id": f"{WS}.t1"})
        assert found["ok"] is True and [i["text"] for i in found["items"]] == [
            "the owner is Ada"]
        with segue.open_history(f"{WS}.t1", home=tmp_path / "home") as child:
            assert [i.text for w in child.windows() for i in child.items(w.window_id)] == [
                "find the owner", "the owner is Ada"]


def test_tasks_nest_at_most_four_deep(tmp_path: Path) -> None:
    agents = tmp_path / "work" / ".segue" / "agents"
    agents.mkdir(parents=True)
    (agents / "nester.md").write_text("---\ntools:\n  add: [task]\n---\nDelegate.\n")
    responses = [task("nester", "level 1"), task("nester", "level 2"),
                 task("nester", "level 3"), task("nester", "level 4"),
                 task("nester", "level 5"),
                 {"text": "4 done"}, {"text": "3 done"}, {"text": "2 done"},
                 {"text": "1 done"}, {"text": "all done"}]
    with open_session(tmp_path, responses) as session:
        assert session.send("nest").status == "completed"
    tasks = segue.list_tasks(WS, home=tmp_path / "home")
    assert [(t.task_id, t.depth) for t in tasks] == [
        (f"{WS}.t1", 1), (f"{WS}.t1.t1", 2), (f"{WS}.t1.t1.t1", 3), (f"{WS}.t1.t1.t1.t1", 4)]
    deepest = HistoryStore(Layout(tmp_path / "home", f"{WS}.t1.t1.t1.t1")).rows()
    [refused] = [p.output for r in deepest for p in r.parts if p.type == "dynamic-tool"]
    assert refused["error"]["code"] == "not_allowed"
    assert "at most 4 deep" in refused["error"]["message"]


def test_stopping_the_turn_stops_the_child(tmp_path: Path) -> None:
    holder: list[segue.Session] = []

    def on_event(event: segue.Event) -> None:
        if isinstance(event, segue.TaskStarted):
            holder[0].cancellation.cancel()  # as Ctrl-C does, while the child runs

    session = open_session(tmp_path, [task("explore", "long work"), {"text": "never"}],
                           on_event=on_event)
    holder.append(session)
    with session:
        result = session.send("go")
    assert result.status == "paused"
    [info] = segue.list_tasks(session)
    assert info.status == "paused"
    child_rows = list(HistoryStore(Layout(tmp_path / "home", f"{WS}.t1")).rows())
    assert [r.text for r in child_rows] == ["long work"]  # the child never took a step
    parent_rows = list(HistoryStore(Layout(tmp_path / "home", WS)).rows())
    [out] = [p.output for r in parent_rows for p in r.parts if p.type == "dynamic-tool"]
    assert out["ok"] is False and out["error"]["code"] == "task_incomplete"
    assert out["taskId"] == f"{WS}.t1"  # the settled step keeps the task's result
