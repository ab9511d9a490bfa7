"""Which workspace a command uses, and what a read of a workspace that does not exist says.

* Inside a git repository (a ``.git`` directory, or a ``.git`` file as in a worktree) every
  subfolder shares the repository root's workspace; outside one, the directory's own.
* A read command on a workspace that does not exist says so in one line, exits 1 and
  creates nothing; `clear` there has nothing to clear and creates nothing either.
* A workspace created from a subfolder before defaults went to the repository root is still
  there under its own id: the error names it when it is the one the user probably meant.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from segue._workspace import derive_workspace_id
from tests.front import cli
from tests.scripted_cli import script

ROOT = Path(__file__).resolve().parents[2]


def segue(home: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--home", str(home), *args])


def listed(home: Path) -> dict[str, int]:
    result = segue(home, "workspaces", "--json")
    assert result.exit_code == 0, result.output
    return {w["workspaceId"]: w["rows"] for w in json.loads(result.stdout)["workspaces"]}


def run_in(directory: Path, home: Path, model: str, prompt: str) -> None:
    """A real `segue run` started in ``directory`` without -w."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.run(
        [sys.executable, "-m", "segue", "--home", str(home), "run", "-m", model, prompt],
        cwd=directory, env=env, capture_output=True, text=True, timeout=120, check=False,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / ".git").mkdir()
    return root


def test_every_subfolder_of_a_repository_shares_the_root_workspace(
    repo: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    model = script(tmp_path, [{"text": "one"}, {"text": "two"}, {"text": "three"}])
    run_in(repo / "src" / "pkg", home, model, "from deep inside")
    run_in(repo / "docs", home, model, "from the docs")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    run_in(outside, home, model, "from outside")
    assert listed(home) == {derive_workspace_id(repo): 4, derive_workspace_id(outside): 2}


def test_history_from_a_subfolder_reads_the_root_workspace(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    model = script(tmp_path, [{"text": "noted"}])
    run_in(repo, home, model, "remember the blue door")
    monkeypatch.chdir(repo / "src" / "pkg")
    found = segue(home, "history", "search", "blue door", "--json")
    assert found.exit_code == 0, found.output
    assert [i["role"] for i in json.loads(found.stdout)["items"]] == ["user"]


def test_a_git_file_marks_the_root_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worktree or a submodule has a `.git` file, not a directory."""
    home = tmp_path / "home"
    root = tmp_path / "worktree"
    (root / "a" / "b").mkdir(parents=True)
    (root / ".git").write_text("gitdir: /somewhere/else/.git/worktrees/x\n")
    monkeypatch.chdir(root / "a" / "b")
    result = segue(home, "history", "windows")
    assert result.exit_code == 1
    assert f"no workspace {derive_workspace_id(root)} " in result.stderr


def test_git_ceiling_directories_stop_the_walk(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(repo))
    monkeypatch.chdir(repo / "src")
    result = segue(tmp_path / "home", "history", "windows")
    assert f"no workspace {derive_workspace_id(repo / 'src')} " in result.stderr


def test_the_subfolder_workspace_of_an_earlier_version_is_named(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, `segue` in src/ used src/'s own workspace; it is still there under that id."""
    home = tmp_path / "home"
    model = script(tmp_path, [{"text": "kept"}])
    old = derive_workspace_id(repo / "src")
    assert segue(home, "-w", old, "run", "-m", model, "older work").exit_code == 0
    monkeypatch.chdir(repo / "src")
    result = segue(home, "history", "windows")
    assert result.exit_code == 1
    assert len(result.stderr.strip().splitlines()) == 1
    assert f"this folder's own workspace is {old}: use `segue -w {old} …`" in result.stderr
    assert segue(home, "-w", old, "history", "search", "older work").exit_code == 0


READS = [
    ("history", "windows"),
    ("history", "windows", "--json"),
    ("history", "items", "w:0"),
    ("history", "read", "0"),
    ("history", "search", "anything"),
    ("history", "search", "anything", "--json"),
    ("history", "export", "--format", "md"),
    ("history", "export", "--format", "json", "-o", "out.json"),
    ("history", "verify"),
    ("history", "reindex"),
    ("history", "tool", '{"action":"list_windows"}'),
]


@pytest.mark.parametrize("args", READS, ids=" ".join)
def test_a_read_of_a_missing_workspace_says_so_and_creates_nothing(
    args: tuple[str, ...], segue_home: Path, workdir: Path, tmp_path: Path
) -> None:
    model = script(tmp_path, [{"text": "hi"}])
    assert segue(segue_home, "-w", "real", "run", "-m", model, "hello").exit_code == 0
    before = sorted(segue_home.rglob("*"))
    result = segue(segue_home, "-w", "typo", *args)
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        f"segue: error: no workspace typo under {segue_home}: nothing has run there yet "
        "(`segue workspaces` lists them)"
    ]
    assert sorted(segue_home.rglob("*")) == before
    assert list(workdir.iterdir()) == []  # not even the export's output file


def test_an_emptied_workspace_still_exists(segue_home: Path, workdir: Path, tmp_path: Path) -> None:
    model = script(tmp_path, [{"text": "hi"}])
    assert segue(segue_home, "-w", "ws", "run", "-m", model, "hello").exit_code == 0
    assert segue(segue_home, "-w", "ws", "clear", "--yes").exit_code == 0
    result = segue(segue_home, "-w", "ws", "history", "windows", "--json")
    assert result.exit_code == 0, result.output
    assert [w["items"] for w in json.loads(result.stdout)["windows"]] == [0]
    del workdir


@pytest.mark.parametrize("flags", [("--yes",), ("--soft",), ()], ids=" ".join)
def test_clear_on_an_unused_workspace_has_nothing_to_clear(
    flags: tuple[str, ...], tmp_path: Path
) -> None:
    home = tmp_path / "home"
    result = segue(home, "-w", "unused", "clear", *flags)
    assert result.exit_code == 0, result.output
    assert result.stdout == "nothing to clear: workspace unused has no transcript\n"
    assert not home.exists()


def test_the_first_run_at_the_root_names_the_earlier_subfolder_workspace(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    model = script(tmp_path, [{"text": "a"}, {"text": "b"}, {"text": "c"}])
    old = derive_workspace_id(repo / "src")
    assert segue(home, "-w", old, "run", "-m", model, "older work").exit_code == 0
    monkeypatch.chdir(repo / "src")
    first = segue(home, "run", "-m", model, "new work")
    assert first.exit_code == 0, first.output
    assert f"earlier conversation is in workspace {old}: continue it with `segue -w {old}" in (
        first.stderr
    )
    second = segue(home, "run", "-m", model, "more new work")  # the root's is in use now
    assert "earlier conversation" not in second.stderr
    assert listed(home) == {old: 2, derive_workspace_id(repo): 4}
