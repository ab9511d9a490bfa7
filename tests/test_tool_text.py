"""Tool calls and results as people read them: an excerpt, not escaped JSON."""

from __future__ import annotations

from segue._render.tool_text import call_text, result_text


def test_a_command_and_its_output_read_as_text() -> None:
    assert call_text("bash", {"command": "pytest -q\n  tests"}) == "bash $ pytest -q tests"
    output = {"ok": True, "exitCode": 1, "output": "".join(f"line {i}\n" for i in range(10)),
              "durationMs": 1234}
    assert result_text(output).split("\n") == [
        "    → exit 1 · 1.2s", *(f"      line {i}" for i in range(6)), "      … 4 more lines"]


def test_interrupted_denied_and_failed_calls_say_so() -> None:
    killed = {"ok": False, "exitCode": None, "output": "",
              "error": {"code": "interrupted", "message": "the user interrupted"}}
    assert result_text(killed) == (
        "    → interrupted: the command and its child processes were killed")
    denied = {"ok": False, "error": {"code": "approval_denied", "message": "the user declined"}}
    assert result_text(denied) == "    → not run: the user declined"
    missing = {"ok": False, "error": {"code": "not_found", "message": "a.txt does not exist"}}
    assert result_text(missing) == "    → error not_found: a.txt does not exist"
    assert result_text({"ok": True, "path": "a.py", "bytes": 12}) == "    → ok · a.py (12 bytes)"
    assert call_text("file_edit", {"path": "a.py", "old_string": "x"}) == "file_edit a.py"
