"""Sub-agents through the command line (SPEC.md R41): the ``task`` tool runs a child agent in
a child workspace of its own, and ``session_history`` reads a descendant with ``task_id``.

Every scenario runs one scripted conversation: the script's responses are taken in the order
requests come, so a parent's step, then its child's steps, then the parent's again.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

import segue as segue_pkg
from segue import HistoryStore, Layout, Row
from tests.front import cli, read_rows

WS = "proj"
CHILD = f"{WS}.t1"


def segue(home: Path, *args: str, workspace: str = WS) -> Result:
    return CliRunner().invoke(cli, ["--home", str(home), "-w", workspace, *args])


def script(path: Path, responses: list[dict[str, Any]], *, window: int = 16000) -> str:
    path.write_text(json.dumps({"contextWindow": window, "encoding": "o200k_base",
                                "requestLog": f"{path.stem}.log.jsonl",
                                "responses": responses}))
    return f"scripted:{path}"


def requests(model: str) -> list[dict[str, Any]]:
    path = Path(model.removeprefix("scripted:"))
    log = path.with_name(f"{path.stem}.log.jsonl")
    return read_rows(log)


def task(agent: str, prompt: str) -> dict[str, Any]:
    return {"name": "task", "input": {"agent": agent, "prompt": prompt}}


def history(args: dict[str, Any]) -> dict[str, Any]:
    return {"name": "session_history", "input": args}


def rows(home: Path, workspace: str = WS) -> list[Row]:
    return list(HistoryStore(Layout(home, workspace)).rows())


def outputs(home: Path, workspace: str = WS) -> list[tuple[str, Any]]:
    """Every tool call's name and result in a workspace's transcript, in order."""
    return [(p.toolName or "", p.output) for r in rows(home, workspace) for p in r.parts
            if p.type == "dynamic-tool"]


def run(home: Path, model: str, prompt: str, *extra: str) -> dict[str, Any]:
    result = segue(home, "run", "-m", model, "--json", *extra, prompt)
    assert result.exit_code == 0, result.output
    closing: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return closing


def setup(home: Path) -> None:
    assert segue(home, "settings", "set", "experiments.tokenBudget", "true").exit_code == 0


def test_a_parent_delegates_twice_and_each_child_has_its_own_workspace(
    segue_home: Path, workdir: Path, tmp_path: Path
) -> None:
    setup(segue_home)
    (workdir / "notes.txt").write_text("the build uses meson\n")
    model = script(tmp_path / "s.json", [
        {"toolCalls": [task("explore", "Which build system? Read notes.txt.")]},
        {"toolCalls": [{"name": "file_read", "input": {"path": "notes.txt"}}]},
        {"text": "It is meson (notes.txt line 1)."},
        {"toolCalls": [task("exec", "Count the files in the project.")]},
        {"text": "There is one file."},
        {"text": "Meson, and one file."},
    ])
    closing = run(segue_home, model, "tell me about the project")
    assert closing["status"] == "completed" and closing["text"] == "Meson, and one file."
    assert closing["tasks"] == [
        {"taskId": CHILD, "agent": "explore", "status": "completed", "reason": None,
         "rollovers": 0},
        {"taskId": f"{WS}.t2", "agent": "exec", "status": "completed", "reason": None,
         "rollovers": 0},
    ]
    results = [out for name, out in outputs(segue_home) if name == "task"]
    assert [r["report"] for r in results] == ["It is meson (notes.txt line 1).",
                                             "There is one file."]
    assert [r["taskId"] for r in results] == [CHILD, f"{WS}.t2"]
    assert all(r["ok"] is True and r["windowId"] == "w:0" for r in results)
    # Each child's transcript is its own: its prompt as the first row, its agent's replies;
    # nothing of the child is written into the parent's transcript but the tool result.
    first = rows(segue_home, CHILD)
    assert first[0].role == "user" and first[0].text == "Which build system? Read notes.txt."
    assert {r.metadata.get("agentId") for r in first[1:]} == {"explore"}
    assert outputs(segue_home, CHILD) == [("file_read", outputs(segue_home, CHILD)[0][1])]
    assert "meson" in json.dumps(outputs(segue_home, CHILD)[0][1])
    assert rows(segue_home, f"{WS}.t2")[0].text == "Count the files in the project."
    assert not any(name == "file_read" for name, _ in outputs(segue_home))
    # The child's model saw its own conversation only, never its parent's.
    child_requests = [r for r in requests(model)
                      if r["messages"][0]["parts"][0]["text"].startswith("Which build")]
    assert len(child_requests) == 2
    assert all("tell me about" not in json.dumps(r["messages"]) for r in child_requests)

    listed = segue(segue_home, "workspaces", "--json")
    by_id = {w["workspaceId"]: w for w in json.loads(listed.stdout)["workspaces"]}
    assert by_id[CHILD]["parent"] == WS and by_id[CHILD]["agent"] == "explore"
    assert by_id[CHILD]["status"] == "completed" and by_id[WS]["parent"] is None
    assert list(by_id) == [WS, CHILD, f"{WS}.t2"]  # children right after the parent
    plain = segue(segue_home, "workspaces").stdout.splitlines()
    assert plain[0].startswith(f"{WS}  ")
    assert plain[1].startswith(f"  {CHILD}  ") and "task=explore:completed" in plain[1]
    assert plain[2].startswith(f"  {WS}.t2  ") and "task=exec:completed" in plain[2]


def test_the_line_output_says_when_a_task_starts_and_ends(
    segue_home: Path, workdir: Path, tmp_path: Path
) -> None:
    model = script(tmp_path / "s.json", [
        {"toolCalls": [task("explore", "look around")]},
        {"text": "looked"},
        {"text": "done"},
    ])
    result = segue(segue_home, "run", "-m", model, "go")
    assert result.exit_code == 0, result.output
    assert f"[segue] task {CHILD} (explore) started: look around" in result.stderr
    assert f"[segue] task {CHILD} (explore) completed · 0 rollovers" in result.stderr
    assert f"segue -w {CHILD} history windows" in result.stderr


def test_a_child_that_rolls_over_and_a_parent_that_finds_its_first_window(
    segue_home: Path, workdir: Path, tmp_path: Path
) -> None:
    setup(segue_home)
    # Three reads of ~1,700 tokens each fill an 8,000-token window past 75 %.
    for n in range(3):
        body = "\n".join(f"log {n}.{i}: worker {i * 7 % 13} handled request {i * 31 + n}"
                         for i in range(160))
        if n == 0:
            body = "the deploy key fingerprint is SHA256:q7ZtK9\n" + body
        (workdir / f"log{n}.txt").write_text(body)
    model = script(tmp_path / "s.json", [
        {"toolCalls": [task("explore", "Read the three logs and summarize them.")]},
        {"toolCalls": [{"name": "file_read", "input": {"path": "log0.txt"}}]},
        {"toolCalls": [{"name": "file_read", "input": {"path": "log1.txt"}}]},
        {"toolCalls": [{"name": "file_read", "input": {"path": "log2.txt"}}]},
        {"text": "Three worker logs, nothing failed."},
        {"toolCalls": [history({"action": "search", "query": "fingerprint", "task_id": CHILD,
                                "match": "literal"})]},
        {"toolCalls": [history({"action": "list_windows", "task_id": CHILD})]},
        {"text": "The key is SHA256:q7ZtK9."},
    ], window=8000)
    closing = run(segue_home, model, "what is the deploy key fingerprint?")
    assert closing["status"] == "completed"
    [finished] = closing["tasks"]
    assert finished["rollovers"] >= 1  # the child rolled over in its own workspace
    # The parent's transcript never rolled over for the child's reads.
    assert closing["rollovers"] == 0
    child_windows = json.loads(segue(segue_home, "history", "windows", "--json",
                                     workspace=CHILD).stdout)["windows"]
    assert [w["kind"] for w in child_windows][:2] == ["root", "rollover"]
    found, windows = [out for name, out in outputs(segue_home) if name == "session_history"]
    assert found["ok"] is True and found["items"], found
    assert {i["windowId"] for i in found["items"]} == {"w:0"}  # the child's first window
    assert any("SHA256:q7ZtK9" in i["text"] for i in found["items"])
    assert [w["windowId"] for w in windows["windows"]] == [
        w["windowId"] for w in reversed(child_windows)]  # newest first, the child's own


def test_a_child_is_denied_a_tool_its_parent_has(
    segue_home: Path, workdir: Path, tmp_path: Path
) -> None:
    model = script(tmp_path / "s.json", [
        {"toolCalls": [task("explore", "make a file")]},
        {"toolCalls": [{"name": "bash", "input": {"command": "touch by-child"}},
                       {"name": "file_write", "input": {"path": "w.txt", "content": "x"}}]},
        {"text": "could not"},
        {"toolCalls": [{"name": "bash", "input": {"command": "touch by-parent"}}]},
        {"text": "done"},
    ])
    run(segue_home, model, "go", "--approve", "full")
    child = dict(outputs(segue_home, CHILD))
    assert child["bash"]["error"]["code"] == "tool_not_allowed"
    assert child["file_write"]["error"]["code"] == "tool_not_allowed"
    assert not (workdir / "by-child").exists() and not (workdir / "w.txt").exists()
    assert (workdir / "by-parent").exists()  # the parent has bash, in the same mode
    child_tools = {t["name"] for r in requests(model)
                   if r["messages"][0]["parts"][0]["text"] == "make a file" for t in r["tools"]}
    assert child_tools and "bash" not in child_tools and "file_read" in child_tools


def test_a_child_gets_at_most_its_parents_tools(
    segue_home: Path, workdir: Path, tmp_path: Path
) -> None:
    agents = workdir / ".segue" / "agents"
    agents.mkdir(parents=True)
    (agents / "lead.md").write_text(
        "---\ntools:\n  add: [task, file_read, session_history]\n---\nDelegate the work.\n")
    model = script(tmp_path / "s.json", [
        {"toolCalls": [task("exec", "run the tests")]},
        {"toolCalls": [{"name": "bash", "input": {"command": "touch ran"}}]},
        {"text": "no shell here"},
        {"text": "ok"},
    ])
    run(segue_home, model, "go", "--agent", "lead", "--approve", "full")
    [(name, out)] = outputs(segue_home, CHILD)
    assert name == "bash" and out["error"]["code"] == "tool_not_allowed"
    assert not (workdir / "ran").exists()
    [link] = [w for w in json.loads(segue(segue_home, "workspaces", "--json").stdout)
              ["workspaces"] if w["workspaceId"] == CHILD]
    assert link["agent"] == "exec"


def test_a_child_works_under_its_parents_approval_mode(
    segue_home: Path, workdir: Path, tmp_path: Path
) -> None:
    responses: list[dict[str, Any]] = [
        {"toolCalls": [task("exec", "touch a file")]},
        {"toolCalls": [{"name": "bash", "input": {"command": "touch made"}}]},
        {"text": "tried"},
        {"text": "ok"},
    ]
    run(segue_home, script(tmp_path / "a.json", responses), "go")  # ask: nobody to ask
    [(_, denied)] = outputs(segue_home, CHILD)
    assert denied["error"]["code"] == "approval_denied" and not (workdir / "made").exists()
    run(segue_home, script(tmp_path / "b.json", responses), "go", "--approve", "full")
    [(_, ran)] = outputs(segue_home, f"{WS}.t2")
    assert ran.get("exitCode") == 0 and (workdir / "made").exists()


def test_a_child_cannot_read_its_parent(
    segue_home: Path, workdir: Path, tmp_path: Path
) -> None:
    setup(segue_home)
    model = script(tmp_path / "s.json", [
        {"toolCalls": [task("exec", "look back")]},
        {"toolCalls": [history({"action": "search", "query": "parent-only-phrase",
                                "task_id": WS}),
                       history({"action": "search", "query": "parent-only-phrase",
                                "match": "literal"})]},
        {"text": "nothing of the parent"},
        {"text": "ok"},
    ])
    run(segue_home, model, "this parent-only-phrase stays with me")
    up, own = [out for _, out in outputs(segue_home, CHILD)]
    assert up["ok"] is False and up["error"]["code"] == "invalid_argument"
    assert "never a parent's" in up["error"]["message"]
    assert own["ok"] is True and own["items"] == []  # its own history has none of it


def test_a_bad_task_id_gets_a_clear_error(
    segue_home: Path, workdir: Path, tmp_path: Path
) -> None:
    setup(segue_home)
    other = script(tmp_path / "o.json", [
        {"toolCalls": [task("explore", "elsewhere")]}, {"text": "x"}, {"text": "y"}])
    result = segue(segue_home, "run", "-m", other, "other work", workspace="other")
    assert result.exit_code == 0, result.output
    model = script(tmp_path / "s.json", [
        {"toolCalls": [history({"action": "list_windows", "task_id": "proj.t9"}),
                       history({"action": "list_windows", "task_id": "not a task!"}),
                       history({"action": "list_windows", "task_id": "other.t1"}),
                       history({"action": "list_windows", "task_id": WS}),
                       history({"action": "list_windows", "task_id": 7})]},
        {"text": "ok"},
    ])
    run(segue_home, model, "look")
    missing, malformed, foreign, itself, typed = [out for _, out in outputs(segue_home)]
    for out in (missing, malformed, foreign, itself, typed):
        assert out["ok"] is False and out["error"]["code"] == "invalid_argument", out
        assert "\n" not in out["error"]["message"]
    assert "no task 'proj.t9' under this workspace" in missing["error"]["message"]
    assert "is not a task id" in malformed["error"]["message"]
    assert "no task 'other.t1'" in foreign["error"]["message"]  # another workspace's child
    assert "this workspace itself" in itself["error"]["message"]
    assert "task_id must be a string" in typed["error"]["message"]


def test_the_floor_in_a_child_applies_to_its_parents_look_back(
    segue_home: Path, workdir: Path, tmp_path: Path
) -> None:
    setup(segue_home)
    first = script(tmp_path / "a.json", [
        {"toolCalls": [task("exec", "remember the code word")]},
        {"text": "the code word is heliotrope-42"},
        {"text": "ok"},
    ])
    run(segue_home, first, "delegate")
    search = {"action": "search", "query": "heliotrope-42", "match": "literal",
              "task_id": CHILD}
    before = json.loads(segue(segue_home, "history", "tool", json.dumps(search)).stdout)
    assert [i["windowId"] for i in before["items"]] == ["w:0"]  # readable before the clear
    assert segue(segue_home, "clear", "--soft", workspace=CHILD).exit_code == 0
    second = script(tmp_path / "b.json", [{"toolCalls": [history(search)]}, {"text": "gone"}])
    run(segue_home, second, "look again")
    [(_, after)] = [o for o in outputs(segue_home) if o[0] == "session_history"]
    assert after["ok"] is True and after["items"] == []  # the child's own floor holds
    people = segue(segue_home, "history", "search", "heliotrope-42", workspace=CHILD)
    assert "heliotrope-42" in people.stdout  # the owner still sees the whole transcript


def test_an_unknown_agent_starts_no_task(
    segue_home: Path, workdir: Path, tmp_path: Path
) -> None:
    model = script(tmp_path / "s.json", [
        {"toolCalls": [task("nosuch", "anything"), task("explore", " ")]},
        {"text": "ok"},
    ])
    closing = run(segue_home, model, "go")
    assert "tasks" not in closing  # §5's closing object, exactly, when no task ran
    unknown, empty = [out for _, out in outputs(segue_home)]
    assert unknown["error"]["code"] == "unknown_agent"
    assert "unknown agent 'nosuch'" in unknown["error"]["message"]
    assert empty["error"]["code"] == "invalid_argument"
    assert not (segue_home / "sessions" / CHILD).exists()


def test_the_parents_floor_hides_the_tasks_it_ran_before(
    segue_home: Path, workdir: Path, tmp_path: Path
) -> None:
    setup(segue_home)
    first = script(tmp_path / "a.json", [
        {"toolCalls": [task("exec", "hold the secret")]},
        {"text": "the secret is amaranth-7"},
        {"text": "ok"},
    ])
    run(segue_home, first, "delegate")
    assert segue(segue_home, "clear", "--soft").exit_code == 0  # the parent's own floor
    search = {"action": "search", "query": "amaranth-7", "match": "literal"}
    second = script(tmp_path / "b.json", [
        {"toolCalls": [history({**search, "task_id": CHILD})]},
        {"toolCalls": [task("exec", "hold another")]},
        {"text": "the other is amaranth-8"},
        {"toolCalls": [history({**search, "query": "amaranth-8", "task_id": f"{WS}.t2"})]},
        {"text": "ok"},
    ])
    run(segue_home, second, "look back")
    hidden, shown = [out for name, out in outputs(segue_home) if name == "session_history"]
    assert hidden["ok"] is False and hidden["error"]["code"] == "invalid_argument"
    assert "before the newest reset" in hidden["error"]["message"]
    assert "amaranth-7" not in json.dumps(hidden)
    assert [i["windowId"] for i in shown["items"]] == ["w:0"]  # a task after the clear reads


def test_a_hard_clear_destroys_the_tasks_too(
    segue_home: Path, workdir: Path, tmp_path: Path
) -> None:
    responses: list[dict[str, Any]] = [{"toolCalls": [task("explore", "dig")]},
                 {"toolCalls": [task("explore", "dig deeper")]}, {"text": "deep"},
                 {"text": "dug"}, {"text": "ok"}]
    agents = workdir / ".segue" / "agents"
    agents.mkdir(parents=True)
    # A delegating child: explore's tools plus task (still within the parent's exec).
    (agents / "digger.md").write_text("---\ntools:\n  add: [task, file_read]\n---\nDig.\n")
    responses[0] = {"toolCalls": [task("digger", "dig")]}
    run(segue_home, script(tmp_path / "a.json", responses), "go")
    listed = [w["workspaceId"] for w in json.loads(
        segue(segue_home, "workspaces", "--json").stdout)["workspaces"]]
    assert listed == [WS, CHILD, f"{CHILD}.t1"]  # a task's own task, under it
    cleared = segue(segue_home, "clear", "--yes")
    assert cleared.exit_code == 0 and "with 2 task workspace(s)" in cleared.stdout
    assert not (segue_home / "sessions" / CHILD).exists()
    listed = [w["workspaceId"] for w in json.loads(
        segue(segue_home, "workspaces", "--json").stdout)["workspaces"]]
    assert listed == [WS]
    again = script(tmp_path / "b.json", [{"toolCalls": [task("explore", "anew")]},
                                          {"text": "fresh"}, {"text": "ok"}])
    closing = run(segue_home, again, "go again")
    assert [t["taskId"] for t in closing["tasks"]] == [CHILD]  # the id is free again
    assert rows(segue_home, CHILD)[0].text == "anew"


def test_a_cursor_stays_in_the_history_it_was_issued_in(
    segue_home: Path, workdir: Path, tmp_path: Path
) -> None:
    setup(segue_home)
    model = script(tmp_path / "s.json", [
        {"toolCalls": [task("explore", "say two things")]}, {"text": "one thing"},
        {"text": "ok"},
    ])
    run(segue_home, model, "go")
    first = {"action": "list_items", "window_id": "w:0", "limit": 1, "task_id": CHILD}
    # One process, one call per line: cursors live per process (SPEC.md §5).
    env = {**os.environ, "PYTHONPATH": str(Path(segue_pkg.__file__).resolve().parents[1])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "segue", "--home", str(segue_home), "-w", WS, "history", "tool"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdin is not None and proc.stdout is not None

    def ask(call: dict[str, Any]) -> dict[str, Any]:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps(call) + "\n")
        proc.stdin.flush()
        answer: dict[str, Any] = json.loads(proc.stdout.readline())
        return answer

    try:
        page = ask(first)
        assert page["ok"] is True and isinstance(page["nextCursor"], str)
        same = ask({**first, "cursor": page["nextCursor"]})
        parents = ask({"action": "list_items", "window_id": "w:0", "limit": 1,
                       "cursor": page["nextCursor"]})
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
        proc.stdout.close()
    assert same["ok"] is True and [i["text"] for i in same["items"]] == ["say two things"]
    assert parents["ok"] is False  # the child's cursor does not page the parent's history
    assert parents["error"]["code"] in {"invalid_cursor", "stale_cursor"}
