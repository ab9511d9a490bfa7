"""The chat loop's side of approval (R38), with scripted keys: the question and its answers,
/approve, and a pasted block that starts with a path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from segue._chat import commands as cmd
from tests.chat.helpers import chat


def _write(path: str) -> dict[str, Any]:
    return {"text": "", "toolCalls": [
        {"name": "file_write", "input": {"path": path, "content": "new\n"}}]}


def test_the_question_shows_the_diff_and_always_is_listed_by_approve(tmp_path: Path) -> None:
    c = chat(tmp_path, [_write("a.txt"), {"text": "wrote"}])
    (tmp_path / "work" / "a.txt").write_text("old\n")
    status, keys = c.run(["change it", "a", "/approve"], interactive=True)
    assert status == 0
    assert "Allow? [y/N/a] " in keys.prompts
    assert "file_write wants to change a.txt:" in c.text
    assert "-old" in c.text and "+new" in c.text  # the diff the write would make
    assert (tmp_path / "work" / "a.txt").read_text() == "new\n"
    assert "approval mode ask" in c.text
    assert "allow file_write:a\\.txt" in c.text  # the remembered rule, listed


def test_approve_mode_changes_this_chat_and_an_empty_answer_is_no(tmp_path: Path) -> None:
    c = chat(tmp_path, [_write("b.txt"), {"text": "declined"}, _write("c.txt"), {"text": "ok"}])
    status, keys = c.run(["write b", "", "/approve auto-edit", "write c"], interactive=True)
    assert status == 0
    assert keys.prompts.count("Allow? [y/N/a] ") == 1  # auto-edit: the second write ran
    assert not (tmp_path / "work" / "b.txt").exists()
    assert (tmp_path / "work" / "c.txt").exists()
    assert "approval mode auto-edit" in c.text


def test_a_pasted_block_starting_with_a_path_is_a_message() -> None:
    pasted = "/usr/lib/x.py:3: error\n  raise ValueError"
    assert cmd.parse(pasted) == cmd.Message(pasted)
    assert cmd.parse("/usr/lib/x.py") == cmd.Unknown("/usr/lib/x.py")  # one line: a typo
    assert cmd.parse("/approve full") == cmd.Approve("full")


def test_always_for_a_call_no_rule_can_cover_says_so_and_remembers_nothing(
        tmp_path: Path) -> None:
    """A command with shell syntax: "always" runs it once, and the chat says nothing was
    remembered (a rule that cannot match it would be a false promise)."""
    call = {"text": "", "toolCalls": [
        {"name": "bash", "input": {"command": "echo hi > out.txt; echo done"}}]}
    c = chat(tmp_path, [call, {"text": "ran"}])
    status, _keys = c.run(["do it", "a", "/approve"], interactive=True)
    assert status == 0
    assert (tmp_path / "work" / "out.txt").read_text() == "hi\n"  # it ran once
    assert "a runs it once too: no rule is remembered for it" in c.text
    assert "ran once; nothing remembered" in c.text
    assert "remembered for this workspace" not in c.text
    assert "allow bash:" not in c.text  # /approve lists no such rule
