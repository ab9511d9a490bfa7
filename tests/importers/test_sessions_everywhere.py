"""Sessions from everywhere (SPEC.md §9, R11, R25, §3): each imported session is its own window,
re-imports bring late tool results, sub-agent work is imported as tasks (child workspaces
readable with task_id, R41) and counted, media and errors
are written in Xum's vocabulary, compactions become boundaries, a wrong ``--from`` names the
format found, and files are opened as the store opens its own. Black-box: the command line,
the files on disk and ``segue history tool``'s answers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from segue import HistoryStore, Layout
from tests.front import cli, read_rows

#: The README's import limit: text, tool outputs and tool inputs over this many characters
#: are cut with a marker.
MAX_TEXT_CHARS = 200_000

_STATES = {"output-available", "input-available", "input-streaming", "output-redacted"}


def _run(home: Path, *args: str, ws: str = "t") -> Any:
    return CliRunner().invoke(cli, ["--home", str(home), "-w", ws, *args])


def _import(home: Path, fmt: str, path: Path) -> Any:
    return _run(home, "history", "import", "--from", fmt, str(path))


def _tool(home: Path, call: dict[str, Any]) -> dict[str, Any]:
    out = _run(home, "history", "tool", json.dumps(call))
    assert out.exit_code == 0, out.output
    result: dict[str, Any] = json.loads(out.output)
    assert result["ok"] is True, result
    return result


def _text(home: Path) -> str:
    """The transcript history on disk: the archive, then the active file (SPEC.md §3)."""
    folder = home / "sessions" / "t"
    return "".join((folder / name).read_text(encoding="utf-8")
                   for name in ("chat-archive.jsonl", "chat.jsonl") if (folder / name).exists())


def _raw(home: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in _text(home).splitlines()]


def _found(home: Path, phrase: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = _tool(
        home, {"action": "search", "match": "literal", "query": phrase})["items"]
    return items


def _write(path: Path, lines: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


# -- Claude Code lines as 1.0.x–2.x write them -----------------------------------------------

def _cc(kind: str, uid: str, content: Any, *, session: str = "7f3c1e2a-s1",
        parent: str | None = None, ts: str = "2026-03-01T10:00:00.000Z", **extra: Any) -> str:
    message: dict[str, Any] = {"role": kind, "content": content}
    if kind == "assistant":
        message.update(id=f"msg_{uid}", type="message", model="claude-sonnet-4-5-20250929",
                       stop_reason="tool_use", usage={"input_tokens": 12, "output_tokens": 40})
    return json.dumps({
        "parentUuid": parent, "isSidechain": False, "userType": "external",
        "cwd": "/home/dev/proj", "sessionId": session, "version": "2.0.14",
        "gitBranch": "main", "type": kind, "message": message, "uuid": uid,
        "timestamp": ts, **extra,
    })


def _use(call: str, name: str, value: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": call, "name": name, "input": value}


def _result(call: str, text: str, *, error: bool = False) -> dict[str, Any]:
    return {"tool_use_id": call, "type": "tool_result", "content": text, "is_error": error}


def _session(sid: str, day: int, words: str) -> list[str]:
    ts = f"2026-03-0{day}T10:00:00.000Z"
    return [
        json.dumps({"type": "summary", "summary": "Project setup", "leafUuid": f"{sid}-a2"}),
        _cc("user", f"{sid}-u1", words, session=sid, ts=ts),
        _cc("assistant", f"{sid}-a1", [{"type": "text", "text": "Looking."},
                                      _use(f"toolu_{sid}", "Bash", {"command": "ls"})],
            session=sid, parent=f"{sid}-u1", ts=ts),
        _cc("user", f"{sid}-r1", [_result(f"toolu_{sid}", "README.md\nsrc")], session=sid,
            parent=f"{sid}-a1", ts=ts, toolUseResult={"stdout": "README.md\nsrc"}),
        _cc("assistant", f"{sid}-a2", [{"type": "text", "text": f"Done with {sid}."}],
            session=sid, parent=f"{sid}-r1", ts=ts),
    ]


# -- Codex lines as 0.50+ write them ---------------------------------------------------------

def _cx(kind: str, payload: dict[str, Any], ts: str = "2026-02-01T09:00:00.000Z") -> str:
    return json.dumps({"timestamp": ts, "type": kind, "payload": payload})


def _meta(sid: str, ts: str, **extra: Any) -> str:
    return _cx("session_meta", {"id": sid, "timestamp": ts, "cwd": "/home/dev/proj",
                                "originator": "codex_cli_rs", "cli_version": "0.58.0",
                                "instructions": None, **extra}, ts)


def _said(role: str, *parts: dict[str, Any]) -> str:
    return _cx("response_item", {"type": "message", "role": role, "content": list(parts)})


def _in(text: str) -> dict[str, Any]:
    return {"type": "input_text", "text": text}


def _codex_tree(root: Path, sessions: list[tuple[str, str]]) -> Path:
    for day, (sid, words) in enumerate(sessions, start=1):
        ts = f"2026-02-0{day}T09:00:00.000Z"
        _write(root / "2026" / "02" / f"0{day}" / f"rollout-2026-02-0{day}T09-00-00-{sid}.jsonl", [
            _meta(sid, ts),
            _cx("turn_context", {"cwd": "/home/dev/proj", "model": "gpt-5-codex"}, ts),
            _said("user", _in(words)),
            _said("assistant", {"type": "output_text", "text": f"ok {sid}"}),
        ])
    return root


# -- point 1: one window per session, none of them a floor -----------------------------------

def test_three_claude_code_sessions_are_three_windows_all_searchable(tmp_path: Path) -> None:
    project = tmp_path / "project"
    for day, sid in enumerate(["aaa1", "bbb2", "ccc3"], start=1):
        _write(project / f"{sid}.jsonl", _session(sid, day, f"quartz phrase of {sid}"))
    out = _import(tmp_path, "claude-code", project)
    assert out.exit_code == 0, out.output
    windows = _tool(tmp_path, {"action": "list_windows"})["windows"]
    assert len(windows) == 3
    assert sorted(w["kind"] for w in windows) == ["rollover", "rollover", "root"]
    assert len(_found(tmp_path, "quartz phrase of aaa1")) == 1  # the first session
    leads = [r for r in _raw(tmp_path) if r["metadata"].get("muxMetadata", {}).get("type")
             == "context-window-lead-in"]
    assert len(leads) == 2 and "imported claude-code session bbb2" in leads[0]["parts"][0]["text"]


def test_two_separate_imports_keep_both_sessions_reachable(tmp_path: Path) -> None:
    first = _write(tmp_path / "one.jsonl", _session("one1", 1, "amber first words"))
    second = _write(tmp_path / "two.jsonl", _session("two2", 2, "cobalt second words"))
    assert _import(tmp_path, "claude-code", first).exit_code == 0
    assert _import(tmp_path, "claude-code", second).exit_code == 0
    assert len(_tool(tmp_path, {"action": "list_windows"})["windows"]) == 2
    assert len(_found(tmp_path, "amber first words")) == 1
    assert len(_found(tmp_path, "cobalt second words")) == 1


def test_a_codex_sessions_tree_is_one_window_per_rollout(tmp_path: Path) -> None:
    tree = _codex_tree(tmp_path / "sessions", [("0199a-s1", "ochre alpha"),
                                               ("0199b-s2", "umber beta")])
    home = tmp_path / "home"
    assert _import(home, "codex", tree).exit_code == 0
    assert len(_tool(home, {"action": "list_windows"})["windows"]) == 2
    assert len(_found(home, "ochre alpha")) == 1


def test_the_imported_boundary_is_a_valid_rollover_boundary(tmp_path: Path) -> None:
    project = tmp_path / "p"
    _write(project / "a.jsonl", _session("a", 1, "one"))
    _write(project / "b.jsonl", _session("b", 2, "two"))
    assert _import(tmp_path, "claude-code", project).exit_code == 0
    rows = _raw(tmp_path)
    boundary = next(r for r in rows if r["metadata"].get("contextBoundaryKind"))
    mux = boundary["metadata"]["muxMetadata"]
    # Xum's validator (SPEC.md §3): the fields it names, with their types
    assert boundary["role"] == "assistant" and boundary["parts"] == []
    assert "synthetic" not in boundary["metadata"] and "uiVisible" not in boundary["metadata"]
    assert mux["type"] == "context-window-rollover" and mux["reason"] == "on-send"
    assert isinstance(mux["rolloverId"], str) and mux["rolloverId"]
    assert mux["previousWindowId"] == "w:0" and mux["flushOpportunity"] is False
    assert mux["contextTokens"] == 0 and mux["maxTokens"] > 0
    after = rows[rows.index(boundary) + 1]
    assert after["metadata"]["muxMetadata"] == {"type": "context-window-lead-in",
                                                "rolloverId": mux["rolloverId"]}
    windows = _tool(tmp_path, {"action": "list_windows"})["windows"]
    second = f"w:{boundary['metadata']['historySequence']}"
    assert {w["windowId"] for w in windows} == {"w:0", second}


# -- point 2: a re-import brings the result of a call imported before ------------------------

def test_reimporting_a_grown_session_settles_the_earlier_call(tmp_path: Path) -> None:
    lines = _session("grow", 1, "please list")
    head = _write(tmp_path / "s.jsonl", lines[:3])  # the call, not yet its result
    assert _import(tmp_path, "claude-code", head).exit_code == 0
    assert _found(tmp_path, "README.md") == []
    _write(tmp_path / "s.jsonl", lines)
    out = _import(tmp_path, "claude-code", head)
    assert out.exit_code == 0, out.output
    settled = [p for r in _raw(tmp_path) for p in r["parts"]
               if p["type"] == "dynamic-tool" and p["state"] == "output-available"]
    assert [p["output"] for p in settled] == ["README.md\nsrc"]
    assert len(_found(tmp_path, "README.md")) == 1
    assert len(_tool(tmp_path, {"action": "list_windows"})["windows"]) == 1  # same session
    again = _import(tmp_path, "claude-code", head)
    assert "nothing new" in again.output  # the result is not added twice


# -- point 3: sub-agent work is imported as tasks, and counted ------------------------------

def _sidechain(uid: str, kind: str, content: Any, parent: str | None, **extra: Any) -> str:
    line = json.loads(_cc(kind, uid, content, parent=parent, **extra))
    line["isSidechain"] = True
    return json.dumps(line)


def _task_call(home: Path, task_id: str) -> dict[str, Any]:
    """The parent's own look-back, as its model reads it, of one imported task."""
    return _tool(home, {"action": "search", "match": "literal", "query": task_id,
                        "tool_name": "task"})


def test_sidechain_rows_become_a_task_readable_with_task_id(tmp_path: Path) -> None:
    file = _write(tmp_path / "s.jsonl", [
        _cc("user", "u1", "refactor the parser"),
        _cc("assistant", "a1", [_use("toolu_task", "Task", {"prompt": "find callers"})],
            parent="u1"),
        _sidechain("x1", "user", "find callers", None),
        _sidechain("x2", "assistant", [_use("toolu_grep", "Grep", {"pattern": "parse("})], "x1"),
        _sidechain("x3", "user", [_result("toolu_grep", "src/a.py:3: parse(x)")], "x2"),
        _sidechain("x4", "assistant", [{"type": "text", "text": "Callers: src/a.py"}], "x3"),
        _cc("user", "r1", [_result("toolu_task", "Callers: src/a.py")], parent="a1"),
    ])
    out = _import(tmp_path, "claude-code", file)
    assert out.exit_code == 0, out.output
    assert "(3 from sub-agents)" in out.output  # x1, x2 with x3's result, x4
    assert "sub-agent imported as task t.t1: 3 row(s)" in out.output
    # The sub-agent is a task: a child workspace of its own, not a window of the parent.
    assert len(_tool(tmp_path, {"action": "list_windows"})["windows"]) == 1
    assert _found(tmp_path, "src/a.py:3: parse(x)") == []
    [call] = _task_call(tmp_path, "t.t1")["items"]  # the parent's task row names it
    assert '"taskId":"t.t1"' in call["text"] and "Callers: src/a.py" in call["text"]
    hit = _tool(tmp_path, {"action": "search", "match": "literal",
                           "query": "src/a.py:3: parse(x)", "task_id": "t.t1"})["items"]
    assert len(hit) == 1 and hit[0]["windowId"] == "w:0"
    child = read_rows(tmp_path / "sessions" / "t.t1" / "chat.jsonl")
    assert {r["metadata"]["importSource"]["agent"] for r in child} == {"x1"}
    listed = json.loads(_run(tmp_path, "workspaces", "--json").output)["workspaces"]
    assert [(w["workspaceId"], w["parent"], w["status"]) for w in listed] == [
        ("t", None, None), ("t.t1", "t", "imported")]
    again = _import(tmp_path, "claude-code", file)  # nothing new, and no second task
    assert "nothing new" in again.output
    assert not (tmp_path / "sessions" / "t.t2").exists()


def test_a_sub_agent_file_alone_imports(tmp_path: Path) -> None:
    project = tmp_path / "project"
    _write(project / "agent-a1b2c3d4.jsonl", [
        _sidechain("y1", "user", "Warmup", None, agentId="a1b2c3d4"),
        _sidechain("y2", "assistant", [{"type": "text", "text": "vermilion report"}], "y1",
                   agentId="a1b2c3d4"),
    ])
    out = _import(tmp_path, "claude-code", project / "agent-a1b2c3d4.jsonl")
    assert out.exit_code == 0, out.output
    assert "(2 from sub-agents)" in out.output
    found = _tool(tmp_path, {"action": "search", "match": "literal",
                             "query": "vermilion report", "task_id": "t.t1"})["items"]
    assert len(found) == 1
    child = read_rows(tmp_path / "sessions" / "t.t1" / "chat.jsonl")
    assert child[0]["metadata"]["importSource"]["agent"] == "a1b2c3d4"
    assert len(_task_call(tmp_path, "t.t1")["items"]) == 1


def test_a_project_directory_imports_its_sub_agent_files(tmp_path: Path) -> None:
    project = tmp_path / "project"
    _write(project / "main1.jsonl", _session("main1", 1, "the main work"))
    _write(project / "agent-feed.jsonl", [
        _sidechain("z1", "user", "check logs", None, agentId="feed", session="main1",
                   ts="2026-03-01T10:05:00.000Z"),
        _sidechain("z2", "assistant", [{"type": "text", "text": "saffron log line"}], "z1",
                   agentId="feed", session="main1", ts="2026-03-01T10:05:01.000Z"),
    ])
    out = _import(tmp_path, "claude-code", project)
    assert out.exit_code == 0, out.output
    assert "(2 from sub-agents)" in out.output
    assert len(_tool(tmp_path, {"action": "list_windows"})["windows"]) == 1
    [call] = _task_call(tmp_path, "t.t1")["items"]
    assert call["windowId"] == "w:0"  # in the window of the session that ran it
    assert len(_tool(tmp_path, {"action": "search", "match": "literal", "query": "saffron",
                                "task_id": "t.t1"})["items"]) == 1


def test_a_grown_sub_agent_appends_to_its_task(tmp_path: Path) -> None:
    lines = [
        _cc("user", "u1", "start"),
        _sidechain("w1", "user", "survey", None),
        _sidechain("w2", "assistant", [{"type": "text", "text": "first finding"}], "w1"),
    ]
    file = _write(tmp_path / "s.jsonl", lines)
    assert _import(tmp_path, "claude-code", file).exit_code == 0
    _write(file, [*lines, _sidechain("w3", "user", "more", "w2"),
                  _sidechain("w4", "assistant", [{"type": "text", "text": "second finding"}],
                             "w3")])
    out = _import(tmp_path, "claude-code", file)
    assert out.exit_code == 0, out.output
    assert "sub-agent imported as task t.t1: 2 row(s)" in out.output
    assert "nothing new for workspace t itself" in out.output
    texts = [i["text"] for i in _tool(tmp_path, {"action": "list_items", "window_id": "w:0",
                                                 "task_id": "t.t1", "order": "oldest"})["items"]]
    assert texts == ["survey", "first finding", "more", "second finding"]
    assert not (tmp_path / "sessions" / "t.t2").exists()


def test_a_clear_in_the_parent_hides_the_imported_tasks_before_it(tmp_path: Path) -> None:
    file = _write(tmp_path / "s.jsonl", [
        _cc("user", "u1", "start"),
        _sidechain("v1", "user", "look", None),
        _sidechain("v2", "assistant", [{"type": "text", "text": "ochre secret"}], "v1"),
    ])
    assert _import(tmp_path, "claude-code", file).exit_code == 0
    assert _run(tmp_path, "clear", "--soft").exit_code == 0
    out = _run(tmp_path, "history", "tool", json.dumps(
        {"action": "search", "match": "literal", "query": "ochre", "task_id": "t.t1"}))
    answer = json.loads(out.output)
    assert answer["ok"] is False and "before the newest reset" in answer["error"]["message"]


# -- point 4: Codex images ------------------------------------------------------------------

def test_codex_images_become_media_omitted(tmp_path: Path) -> None:
    image = {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="}
    file = _write(tmp_path / "rollout-x.jsonl", [
        _meta("img", "2026-02-01T09:00:00.000Z"),
        _said("user", _in("what is on this screenshot?"), image),
        _said("user", image),
    ])
    assert _import(tmp_path, "codex", file).exit_code == 0
    texts = [r["parts"][0]["text"] for r in _raw(tmp_path)]
    assert texts == ["what is on this screenshot?\n[media omitted]", "[media omitted]"]
    assert "iVBORw0KGgo" not in _text(tmp_path)


# -- point 5: Xum's state vocabulary ---------------------------------------------------------

def test_failed_calls_are_settled_with_an_error_output_as_xum_stores_them(tmp_path: Path) -> None:
    file = _write(tmp_path / "s.jsonl", [
        _cc("user", "u1", "run it"),
        _cc("assistant", "a1", [_use("toolu_1", "Bash", {"command": "make"})], parent="u1"),
        _cc("user", "r1", [_result("toolu_1", "make: *** No rule", error=True)], parent="a1"),
    ])
    assert _import(tmp_path, "claude-code", file).exit_code == 0
    parts = [p for r in _raw(tmp_path) for p in r["parts"] if p["type"] == "dynamic-tool"]
    assert [p["state"] for p in parts] == ["output-available"]
    assert parts[0]["output"] == {"success": False, "error": "make: *** No rule"}
    assert "output-error" not in _text(tmp_path)
    assert len(_found(tmp_path, "No rule")) == 1


def test_codex_failed_call_uses_xum_states(tmp_path: Path) -> None:
    file = _write(tmp_path / "rollout-f.jsonl", [
        _meta("f", "2026-02-01T09:00:00.000Z"),
        _said("user", _in("build")),
        _cx("response_item", {"type": "function_call", "name": "shell", "call_id": "call_9",
                              "arguments": json.dumps({"command": ["cargo", "build"]})}),
        _cx("response_item", {"type": "function_call_output", "call_id": "call_9",
                              "output": {"content": "error[E0425]", "success": False}}),
    ])
    assert _import(tmp_path, "codex", file).exit_code == 0
    parts = [p for r in _raw(tmp_path) for p in r["parts"] if p["type"] == "dynamic-tool"]
    assert all(p["state"] in _STATES for p in parts) and parts
    assert parts[0]["output"] == {"success": False, "error": "error[E0425]"}


# -- point 6: compactions, wrong formats -----------------------------------------------------

def test_claude_code_compact_boundary_becomes_a_compaction_window(tmp_path: Path) -> None:
    file = _write(tmp_path / "s.jsonl", [
        _cc("user", "u1", "before the compaction"),
        json.dumps({"parentUuid": None, "logicalParentUuid": "u1", "isSidechain": False,
                    "type": "system", "subtype": "compact_boundary",
                    "content": "Conversation compacted", "isMeta": False,
                    "timestamp": "2026-03-01T11:00:00.000Z", "uuid": "cb1", "level": "info",
                    "compactMetadata": {"trigger": "auto", "preTokens": 155123},
                    "sessionId": "7f3c1e2a-s1", "version": "2.0.14"}),
        _cc("user", "sum1", "This session is being continued from a previous conversation "
            "that ran out of context. Summary: saffron plan", parent="cb1",
            isVisibleInTranscriptOnly=True, isCompactSummary=True),
        _cc("user", "u2", "after the compaction", parent="sum1"),
    ])
    assert _import(tmp_path, "claude-code", file).exit_code == 0
    windows = _tool(tmp_path, {"action": "list_windows"})["windows"]
    assert sorted(w["kind"] for w in windows) == ["compaction", "root"]
    assert len(_found(tmp_path, "before the compaction")) == 1


def test_a_compact_boundary_without_summary_still_makes_a_boundary(tmp_path: Path) -> None:
    file = _write(tmp_path / "s.jsonl", [
        _cc("user", "u1", "early words"),
        json.dumps({"type": "system", "subtype": "compact_boundary", "uuid": "cb1",
                    "sessionId": "7f3c1e2a-s1", "timestamp": "2026-03-01T11:00:00.000Z",
                    "compactMetadata": {"trigger": "manual", "preTokens": 9000}}),
        _cc("user", "u2", "later words", parent="cb1"),
    ])
    assert _import(tmp_path, "claude-code", file).exit_code == 0
    kinds = sorted(w["kind"] for w in _tool(tmp_path, {"action": "list_windows"})["windows"])
    assert kinds == ["compaction", "root"]
    assert len(_found(tmp_path, "later words")) == 1  # the human's words stay a message


def test_a_codex_file_with_from_claude_code_names_the_format_and_exits_1(tmp_path: Path) -> None:
    tree = _codex_tree(tmp_path / "sessions", [("s1", "words")])
    file = next(tree.rglob("rollout-*.jsonl"))
    out = _import(tmp_path / "home", "claude-code", file)
    assert out.exit_code == 1
    assert "a Codex rollout, not a Claude Code session (use --from codex)" in out.output
    assert "Traceback" not in out.output


def test_a_claude_code_file_with_from_codex_names_the_format_and_exits_1(tmp_path: Path) -> None:
    file = _write(tmp_path / "rollout-s.jsonl", _session("s", 1, "words"))
    out = _import(tmp_path / "home", "codex", file)
    assert out.exit_code == 1
    assert "a Claude Code session, not a Codex rollout (use --from claude-code)" in out.output


def test_a_file_with_no_conversation_exits_1(tmp_path: Path) -> None:
    file = _write(tmp_path / "s.jsonl", [
        json.dumps({"type": "summary", "summary": "Old chat", "leafUuid": "x"}),
        json.dumps({"type": "file-history-snapshot", "messageId": "m", "snapshot": {},
                    "isSnapshotUpdate": False}),
    ])
    out = _import(tmp_path / "home", "claude-code", file)
    assert out.exit_code == 1
    assert "no conversation" in out.output


# -- point 7: mcp serve refuses an unknown workspace -----------------------------------------

def test_mcp_serve_refuses_an_unknown_workspace(tmp_path: Path) -> None:
    out = _run(tmp_path, "mcp", "serve", ws="no-such-ws")
    assert out.exit_code == 1
    assert "no workspace no-such-ws" in out.output
    assert "Traceback" not in out.output
    tool = _run(tmp_path, "history", "tool", '{"action":"list_windows"}', ws="no-such-ws")
    assert tool.exit_code == out.exit_code  # the same refusal as `history tool`


# -- issue 21, 6 and 7: files opened as the store opens them; robust decoding ----------------

def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    return subprocess.run(
        [sys.executable, "-m", "segue", "--home", str(home), "-w", "t", *args],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_and_a_dev_zero_link_in_a_directory_are_left_out(tmp_path: Path) -> None:
    project = tmp_path / "project"
    _write(project / "real.jsonl", _session("real", 1, "teal words"))
    os.mkfifo(project / "pipe.jsonl")
    os.symlink("/dev/zero", project / "z.jsonl")
    done = _cli(tmp_path / "home", "history", "import", "--from", "claude-code", str(project))
    assert done.returncode == 0, done.stderr
    assert "left out" in done.stderr and "pipe.jsonl" in done.stderr and "z.jsonl" in done.stderr
    assert "Imported" in done.stdout
    tree = tmp_path / "sessions"
    _codex_tree(tree, [("ok", "words")])
    os.mkfifo(tree / "rollout-pipe.jsonl")
    done = _cli(tmp_path / "home", "history", "import", "--from", "codex", str(tree))
    assert done.returncode == 0, done.stderr
    assert "rollout-pipe.jsonl" in done.stderr


def test_a_named_link_or_device_is_refused_unless_asked(tmp_path: Path) -> None:
    os.symlink("/dev/zero", tmp_path / "z.jsonl")
    out = _import(tmp_path / "home", "claude-code", tmp_path / "z.jsonl")
    assert out.exit_code == 2 and "symbolic link" in out.output
    followed = _run(tmp_path / "home", "history", "import", "--from", "claude-code",
                    "--follow-symlinks", str(tmp_path / "z.jsonl"))
    assert followed.exit_code == 2 and "not a regular file" in followed.output
    real = _write(tmp_path / "real.jsonl", _session("r", 1, "linked words"))
    os.symlink(real, tmp_path / "link.jsonl")
    ok = _run(tmp_path / "home", "history", "import", "--from", "claude-code",
              "--follow-symlinks", str(tmp_path / "link.jsonl"))
    assert ok.exit_code == 0, ok.output


def test_deeply_nested_codex_arguments_import_without_a_traceback(tmp_path: Path) -> None:
    nested = "[" * 50_000 + "]" * 50_000  # json.loads: RecursionError
    deep: Any = "x"
    for _ in range(100):  # decodes, but deeper than a row keeps as JSON
        deep = [deep]
    file = _write(tmp_path / "rollout-deep.jsonl", [
        _meta("deep", "2026-02-01T09:00:00.000Z"),
        _said("user", _in("go deep")),
        _cx("response_item", {"type": "function_call", "name": "shell", "call_id": "c1",
                              "arguments": nested}),
        _cx("response_item", {"type": "function_call", "name": "shell", "call_id": "c2",
                              "arguments": json.dumps({"a": deep})}),
    ])
    out = _import(tmp_path, "codex", file)
    assert out.exit_code == 0, out.output
    calls = [p for r in _raw(tmp_path) for p in r["parts"] if p["type"] == "dynamic-tool"]
    assert calls[0]["input"]["arguments"].startswith("[[[")
    assert len(calls[0]["input"]["arguments"]) < MAX_TEXT_CHARS + 100
    assert calls[1]["input"]["inputNotImported"].startswith("nested deeper")


def test_huge_tool_inputs_are_cut_like_texts(tmp_path: Path) -> None:
    big = "y" * (MAX_TEXT_CHARS * 2)
    cc = _write(tmp_path / "s.jsonl", [
        _cc("user", "u1", "write it"),
        _cc("assistant", "a1", [_use("toolu_w", "Write", {"file_path": "a", "content": big})]),
        _cc("user", "r1", [_result("toolu_w", "written")], parent="a1"),
    ])
    assert _import(tmp_path, "claude-code", cc).exit_code == 0
    cx = _write(tmp_path / "rollout-big.jsonl", [
        _meta("big", "2026-02-05T09:00:00.000Z"),
        _cx("response_item", {"type": "function_call", "name": "apply_patch", "call_id": "c1",
                              "arguments": json.dumps({"patch": big})}),
    ])
    assert _import(tmp_path, "codex", cx).exit_code == 0
    raw = _text(tmp_path)
    assert all(len(line) < 1024 * 1024 for line in raw.splitlines())
    calls = [p for r in _raw(tmp_path) for p in r["parts"] if p["type"] == "dynamic-tool"]
    assert len(calls) == 2
    assert all(c["input"]["inputNotImported"] == "too long" for c in calls)
    assert all(len(c["input"]["text"]) < MAX_TEXT_CHARS + 100 for c in calls)
    # the capped row is still one session_history reads (R24 skips lines over 1 MiB)
    assert _found(tmp_path, "inputNotImported")


def test_rows_are_read_back_by_the_store(tmp_path: Path) -> None:
    project = tmp_path / "p"
    _write(project / "a.jsonl", _session("a", 1, "one"))
    _write(project / "b.jsonl", _session("b", 2, "two"))
    assert _import(tmp_path, "claude-code", project).exit_code == 0
    rows = list(HistoryStore(Layout(tmp_path, "t")).rows())
    assert [r.sequence for r in rows] == list(range(len(rows)))
    verify = _run(tmp_path, "history", "verify")
    assert verify.exit_code == 0, verify.output


def test_a_codex_sub_agent_session_is_a_task_of_its_parent(tmp_path: Path) -> None:
    tree = _codex_tree(tmp_path / "sessions", [("0199-parent", "parent words")])
    _write(tree / "2026" / "02" / "01" / "rollout-2026-02-01T09-30-00-0199-child.jsonl", [
        _meta("0199-child", "2026-02-01T09:30:00.000Z", source={"subagent": {"thread_spawn": {
            "parent_thread_id": "0199-parent", "depth": 1}}}),
        _said("user", _in("review the diff")),
        _said("assistant", {"type": "output_text", "text": "indigo finding"}),
    ])
    home = tmp_path / "home"
    out = _import(home, "codex", tree)
    assert out.exit_code == 0, out.output
    assert "(2 from sub-agents)" in out.output
    assert len(_tool(home, {"action": "list_windows"})["windows"]) == 1
    child = read_rows(home / "sessions" / "t.t1" / "chat.jsonl")
    found = next(r for r in child if r["parts"] and r["parts"][0].get("text")
                 == "indigo finding")
    assert found["metadata"]["importSource"] == {"format": "codex", "session": "0199-parent",
                                                 "agent": "0199-child"}
    hit = _tool(home, {"action": "search", "match": "literal", "query": "indigo",
                       "task_id": "t.t1"})["items"]
    assert len(hit) == 1


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(order=st.permutations(["s1", "s2", "s3", "s4"]), split=st.integers(0, 4))
def test_any_order_of_imports_gives_one_window_per_session(
    tmp_path_factory: pytest.TempPathFactory, order: list[str], split: int
) -> None:
    """However the sessions arrive (one directory, or several imports in any order), each is
    one window, no floor appears, and every session's phrase is found through the tool."""
    base = tmp_path_factory.mktemp("order")
    home = base / "home"
    first, rest = base / "first", base / "rest"
    for index, sid in enumerate(order):
        folder = first if index < split else rest
        _write(folder / f"{sid}.jsonl", _session(sid, index + 1, f"phrase-{sid}"))
    for folder in (first, rest):
        if folder.exists():
            assert _import(home, "claude-code", folder).exit_code == 0
    windows = _tool(home, {"action": "list_windows"})["windows"]
    assert len(windows) == 4 and "reset" not in {w["kind"] for w in windows}
    for sid in order:
        assert len(_found(home, f"phrase-{sid}")) == 1
