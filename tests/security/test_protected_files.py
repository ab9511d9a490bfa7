"""Issue case 2 (SPEC.md R38): under ``auto-edit`` the model cannot write ``.git/config`` (or
any file that makes a later approved command run code), so one approved ``git status`` runs
only ``git status``. ``full`` may write it, and says so."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.security.helpers import bash, call, git_repo, run

FSMONITOR = '[core]\n\tfsmonitor = "touch ../made-by-fsmonitor; false"\n'


def test_auto_edit_cannot_arm_git_status(tmp_path: Path) -> None:
    work = tmp_path / "work"
    git_repo(work)
    before = (work / ".git" / "config").read_bytes()
    result = run(tmp_path, [
        call("file_write", {"path": ".git/config", "content": FSMONITOR}),
        call("file_edit", {"path": ".git/config", "old_string": "[core]",
                           "new_string": FSMONITOR}),
        call("file_write", {"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\ntouch x\n"}),
        bash("git status --short"),
    ], approve="auto-edit", rules=["bash:git status( --short)?"])
    write, edit, hook, status = result.outputs
    assert [o["error"]["code"] for o in (write, edit, hook)] == ["protected_path"] * 3
    assert "full" in write["error"]["message"]
    assert (work / ".git" / "config").read_bytes() == before
    assert status["exitCode"] == 0 and "f.txt" in status["output"]
    assert not (tmp_path / "made-by-fsmonitor").exists()


@pytest.mark.parametrize("path", [
    ".gitattributes", "sub/.gitattributes", ".envrc", ".bashrc", ".zshrc", ".profile",
    ".segue/agents/exec.md", ".GIT/config", "sub/../.git/info/attributes", ".git",
    ".ssh/config", ".config/git/config",
])
def test_every_mode_but_full_refuses_protected_files(tmp_path: Path, path: str) -> None:
    (tmp_path / "work" / ".git").mkdir(parents=True)
    (tmp_path / "work" / "sub").mkdir()
    for mode in ("auto-edit", "ask", "deny"):
        out = run(tmp_path / mode, [call("file_write", {"path": path, "content": "x"})],
                  approve=mode, rules=["file_write:.*"]).outputs
        assert out[0]["ok"] is False, (mode, out)
        assert not (tmp_path / mode / "work" / path).exists()


def test_a_symlink_to_a_protected_file_is_refused(tmp_path: Path) -> None:
    work = tmp_path / "work"
    git_repo(work)
    os.symlink(".git/config", work / "notes.txt")
    before = (work / ".git" / "config").read_bytes()
    out = run(tmp_path, [call("file_write", {"path": "notes.txt", "content": FSMONITOR})],
              approve="auto-edit").outputs
    assert out[0]["error"]["code"] == "protected_path"
    assert (work / ".git" / "config").read_bytes() == before


def test_plan_files_and_ordinary_files_stay_writable(tmp_path: Path) -> None:
    out = run(tmp_path, [call("file_write", {"path": ".segue/plans/p.md", "content": "x"}),
                         call("file_write", {"path": "src/git.py", "content": "x"})],
              approve="auto-edit").outputs
    assert [o["ok"] for o in out] == [True, True]


def test_full_writes_a_protected_file_and_says_so(tmp_path: Path) -> None:
    work = tmp_path / "work"
    git_repo(work)
    out = run(tmp_path, [call("file_write", {"path": ".envrc", "content": "export A=1\n"})],
              approve="full").outputs
    assert out[0]["ok"] is True
    assert "protected" in out[0]["approvalNotice"] and ".envrc" in out[0]["approvalNotice"]
    assert (work / ".envrc").read_text() == "export A=1\n"


def test_the_file_tools_cannot_assemble_a_bare_repository(tmp_path: Path) -> None:
    """A directory with HEAD, config, objects and refs is a git directory to git, which would
    run its config's core.fsmonitor / diff.external: one marker may be written, no second."""
    out = run(tmp_path, [
        call("file_write", {"path": "config", "content": FSMONITOR}),
        call("file_write", {"path": "HEAD", "content": "ref: refs/heads/main\n"}),
        call("file_write", {"path": "refs/heads/main", "content": "0" * 40}),
        call("file_write", {"path": "objects/info/x", "content": ""}),
        call("file_write", {"path": "src/config", "content": "ordinary"}),
        call("file_write", {"path": "app/config/routes.rb", "content": "ordinary"}),
    ], approve="auto-edit").outputs
    assert [o.get("ok", False) for o in out] == [True, False, False, False, True, True]
    assert {o["error"]["code"] for o in out[1:4]} == {"protected_path"}
    assert not (tmp_path / "work" / "HEAD").exists()
