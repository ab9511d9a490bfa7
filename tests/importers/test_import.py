"""``segue history import --from claude-code|codex`` (SPEC.md §9, R11, R25, R28), through the
command line and the files on disk."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from segue import HistoryStore, Layout
from tests.front import cli

#: The README's import limit: text, tool outputs and tool inputs over this many characters
#: are cut with a marker.
MAX_TEXT_CHARS = 200_000

SAMPLES = Path(__file__).parent / "samples"


def _run(home: Path, *args: str) -> Any:
    return CliRunner().invoke(cli, ["--home", str(home), "-w", "t", *args])


def _rows(home: Path) -> list[Any]:
    return list(HistoryStore(Layout(home, "t")).rows())


def _tool(home: Path, call: dict[str, Any]) -> dict[str, Any]:
    out = _run(home, "history", "tool", json.dumps(call))
    assert out.exit_code == 0, out.output
    result: dict[str, Any] = json.loads(out.output)
    return result


def _cc(kind: str, uid: str, content: Any, *, session: str = "s1", **extra: Any) -> str:
    return json.dumps(
        {
            "type": kind,
            "uuid": uid,
            "sessionId": session,
            "timestamp": "2026-03-01T10:00:00.000Z",
            "message": {"role": kind, "content": content},
            **extra,
        }
    )


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _enable(home: Path) -> None:
    assert _run(home, "settings", "set", "experiments.tokenBudget", "true").exit_code == 0


def test_real_claude_code_sample_imports_calls_with_results(tmp_path: Path) -> None:
    out = _run(tmp_path, "history", "import", "--from", "claude-code",
               str(SAMPLES / "claude-code-session.jsonl"))
    assert out.exit_code == 0, out.output
    rows = _rows(tmp_path)
    assert rows[0].role == "user"
    tools = [p for r in rows for p in r.parts if p.type == "dynamic-tool"]
    assert {p.toolName for p in tools} >= {"ScheduleWakeup", "Agent"}
    assert all(p.state == "output-available" for p in tools)
    wake = next(p for p in tools if p.toolName == "ScheduleWakeup")
    assert wake.output == "Wakeup scheduled in 600s."
    assert [r.sequence for r in rows] == list(range(len(rows)))
    found = _tool(tmp_path, {"action": "search", "query": "three scheduled jobs"})
    assert found["ok"] is True and found["items"]


def test_real_codex_sample_leaves_reasoning_out(tmp_path: Path) -> None:
    out = _run(tmp_path, "history", "import", "--from", "codex",
               str(SAMPLES / "codex-rollout.jsonl"))
    assert out.exit_code == 0, out.output
    raw = (tmp_path / "sessions" / "t" / "chat.jsonl").read_text(encoding="utf-8")
    assert "SYNTHETIC_ENCRYPTED_CONTENT_MUST_NOT_RENDER" not in raw
    assert "I will inspect the synthetic directory." not in raw  # reasoning summary too
    rows = _rows(tmp_path)
    texts = [r.text for r in rows]
    assert texts[0] == "List the synthetic files."
    assert texts.count("List the synthetic files.") == 1  # event_msg duplicates skipped
    calls = {p.toolName: p for r in rows for p in r.parts if p.type == "dynamic-tool"}
    assert calls["exec_command"].input == {"cmd": "find . -maxdepth 1 -type f"}
    assert calls["exec_command"].output == "./alpha.txt\n./beta.txt"
    assert calls["apply_patch"].output == "Done!"
    assert rows[-1].role == "assistant"


def test_only_the_source_clear_is_a_floor_new_sessions_are_windows(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    _write(project / "a.jsonl", [
        _cc("user", "u1", "first session secret"),
        _cc("user", "u2", "<command-name>/clear</command-name>\n<command-args></command-args>"),
        _cc("user", "u3", "after the clear, still session one"),
    ])
    _write(project / "b.jsonl", [
        json.dumps({"type": "summary", "summary": "t", "leafUuid": "x"}),
        _cc("user", "v1", "second session words", session="s2",
            timestamp="2026-03-02T10:00:00.000Z"),
    ])
    home = tmp_path / "home"
    _enable(home)
    out = _run(home, "history", "import", "--from", "claude-code", str(project))
    assert out.exit_code == 0, out.output
    windows = _tool(home, {"action": "list_windows"})["windows"]
    assert sorted(w["kind"] for w in windows) == ["reset", "rollover"]  # the clear, session two
    def literal(query: str) -> list[dict[str, object]]:
        items = _tool(home, {"action": "search", "match": "literal", "query": query})["items"]
        assert isinstance(items, list)
        return items

    assert literal("secret") == []  # below the clear
    assert len(literal("still session one")) == 1
    assert len(literal("second session")) == 1


def test_a_call_without_result_stays_unanswered_and_huge_output_is_cut(tmp_path: Path) -> None:
    big = "x" * (MAX_TEXT_CHARS + 5000)
    file = _write(tmp_path / "s.jsonl", [
        _cc("user", "u1", "go"),
        _cc("assistant", "a1", [
            {"type": "thinking", "thinking": "private chain of thought", "signature": "sig"},
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "cat big"}},
        ]),
        _cc("user", "r1", [{"type": "tool_result", "tool_use_id": "t1", "content": big}]),
        _cc("assistant", "a2", [
            {"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "sleep 99"}},
        ]),
    ])
    out = _run(tmp_path, "history", "import", "--from", "claude-code", str(file))
    assert out.exit_code == 0, out.output
    parts = [p for r in _rows(tmp_path) for p in r.parts if p.type == "dynamic-tool"]
    assert parts[0].state == "output-available"
    assert len(parts[0].output) < MAX_TEXT_CHARS + 100
    assert "more characters not imported" in parts[0].output
    assert parts[1].state == "input-available" and parts[1].output is None
    raw = (tmp_path / "sessions" / "t" / "chat.jsonl").read_text()
    assert "private chain of thought" not in raw
    assert all(len(line) < 1024 * 1024 for line in raw.splitlines())


@pytest.mark.parametrize(
    ("fmt", "bad"),
    [
        ("claude-code", "{not json"),
        ("claude-code", "[1, 2]"),
        ("claude-code", json.dumps({"type": "user", "uuid": "u", "message": "no object"})),
        ("claude-code", json.dumps({"type": "assistant", "message": {"content": [{"x": 1}]}})),
        ("codex", json.dumps({"hello": "world"})),
        ("codex", json.dumps({"type": "response_item",
                              "payload": {"type": "function_call", "name": "f"}})),
    ],
)
def test_a_malformed_line_refuses_the_whole_file(tmp_path: Path, fmt: str, bad: str) -> None:
    good = _cc("user", "u1", "fine") if fmt == "claude-code" else json.dumps(
        {"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "s"}})
    file = _write(tmp_path / "s.jsonl", [good, bad])
    out = _run(tmp_path, "history", "import", "--from", fmt, str(file))
    assert out.exit_code == 2
    assert "line 2" in out.output
    assert "Traceback" not in out.output
    assert _rows(tmp_path) == []
    assert not (tmp_path / "sessions" / "t" / "chat.jsonl").exists() or not _rows(tmp_path)


def test_reimport_appends_only_what_is_new(tmp_path: Path) -> None:
    lines = [_cc("user", "u1", "one"), _cc("assistant", "a1", [{"type": "text", "text": "two"}])]
    file = _write(tmp_path / "s.jsonl", lines)
    assert _run(tmp_path, "history", "import", "--from", "claude-code", str(file)).exit_code == 0
    again = _run(tmp_path, "history", "import", "--from", "claude-code", str(file))
    assert "nothing new" in again.output
    assert len(_rows(tmp_path)) == 2
    _write(file, [*lines, _cc("user", "u2", "three")])  # the session went on
    assert _run(tmp_path, "history", "import", "--from", "claude-code", str(file)).exit_code == 0
    rows = _rows(tmp_path)
    assert [r.text for r in rows] == ["one", "two", "three"]
    assert not any(r.metadata.get("contextBoundaryKind") for r in rows)  # same session: no reset


def test_codex_new_session_and_compaction(tmp_path: Path) -> None:
    def line(kind: str, payload: dict[str, Any], ts: str = "2026-01-01T00:00:00Z") -> str:
        return json.dumps({"timestamp": ts, "type": kind, "payload": payload})

    def user(text: str) -> dict[str, Any]:
        return {"type": "message", "role": "user",
                "content": [{"type": "input_text", "text": text}]}

    tree = tmp_path / "sessions" / "2026" / "01" / "01"
    tree.mkdir(parents=True)
    _write(tree / "rollout-a.jsonl", [
        line("session_meta", {"id": "A"}),
        line("response_item", user("alpha words")),
    ])
    _write(tree / "rollout-b.jsonl", [
        line("session_meta", {"id": "B"}, "2026-01-02T00:00:00Z"),
        line("response_item", user("<environment_context>cwd</environment_context>")),
        line("response_item", user("beta words")),
        line("compacted", {"message": "summary of beta"}),
    ])
    home = tmp_path / "home"
    out = _run(home, "history", "import", "--from", "codex", str(tmp_path / "sessions"))
    assert out.exit_code == 0, out.output
    rows = [r for r in _rows(home) if not r.flag("synthetic")]
    assert [r.text for r in rows if r.text] == ["alpha words", "beta words", "summary of beta"]
    assert rows[1].mux_type == "context-window-rollover"  # session B: a window, not a floor
    assert rows[-1].metadata["compactionBoundary"] is True


def test_a_resumed_session_copying_earlier_lines_imports_them_once(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    first = _cc("user", "u1", "original question")
    _write(project / "a.jsonl", [first])
    # `claude --resume` writes a new session file that repeats the earlier lines.
    _write(project / "b.jsonl", [
        _cc("user", "u1", "original question", session="s2"),
        _cc("user", "u2", "follow-up", session="s2", timestamp="2026-03-02T10:00:00.000Z"),
    ])
    out = _run(tmp_path, "history", "import", "--from", "claude-code", str(project))
    assert out.exit_code == 0, out.output
    rows = [r for r in _rows(tmp_path) if not r.flag("synthetic")]
    assert [r.text for r in rows if r.text] == ["original question", "follow-up"]
    assert not any(r.metadata.get("contextBoundaryKind") == "reset"
                   and r.mux_type != "context-window-rollover" for r in rows)  # no floor


def test_codex_legacy_rollout_with_bare_items(tmp_path: Path) -> None:
    file = _write(tmp_path / "rollout-old.jsonl", [
        json.dumps({"id": "old-1", "timestamp": "2025-05-01T10:00:00Z", "instructions": None}),
        json.dumps({"record_type": "state"}),
        json.dumps({"type": "message", "role": "user",
                    "content": [{"type": "input_text", "text": "run the tests"}]}),
        json.dumps({"type": "local_shell_call", "call_id": "c1", "status": "completed",
                    "action": {"type": "exec", "command": ["pytest", "-q"]}}),
        json.dumps({"type": "function_call_output", "call_id": "c1",
                    "output": {"content": "3 failed", "success": False}}),
        json.dumps({"type": "message", "role": "assistant",
                    "content": [{"type": "output_text", "text": "Three tests fail."}]}),
    ])
    out = _run(tmp_path, "history", "import", "--from", "codex", str(file))
    assert out.exit_code == 0, out.output
    rows = _rows(tmp_path)
    assert rows[0].text == "run the tests"
    call = rows[1].parts[0]
    # Xum's vocabulary: a failed call is settled, its output says it failed (point 5)
    assert (call.toolName, call.state) == ("local_shell", "output-available")
    assert call.output == {"success": False, "error": "3 failed"}
    assert call.input == {"type": "exec", "command": ["pytest", "-q"]}
    assert rows[2].text == "Three tests fail."
