"""Every ``examples/library_*.py`` runs as written, as a real process, offline, and leaves
what its docstring says on disk (checked through the command line)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import segue

ROOT = Path(__file__).resolve().parents[2]
SRC = Path(segue.__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("library_*.py"))

#: What each example prints on the way (its own checks decide its exit status).
EXPECTED = {
    "library_quickstart.py": ["[send] completed", "[tool] bash -> 'notes.txt'",
                              "[stream] completed", "assistant: I see notes.txt"],
    "library_approval.py": ["[asked] bash: rm -rf draft", "approval_denied",
                            "[always] remembering file_write:summary\\.md", "[turn] completed"],
    "library_history.py": ["reset: 4 items", "user: the deploy key is in the vault",
                           "search 'vault' -> 0 items"],
    "library_async.py": ["[asked] file_write: file_write:hello.txt", "[turn] completed",
                         "[asend] completed: You are welcome."],
    "library_subagents.py": ["[task] library-subagents.t1 completed, 1 rollover(s)",
                             "[library-subagents.t1] windows: root, rollover",
                             "[library-subagents.t1] bash refused: True",
                             "[parent] the look-back result held the key: True",
                             "[look-back] task_id=library-subagents.t1: 1 item(s) in w:0"],
}


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SEGUE_", "OPENAI_",
                                                                     "ANTHROPIC_"))}
    return {**env, "SEGUE_HOME": str(home), "PYTHONPATH": str(SRC)}


def _run(args: list[str], home: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True,
                          env=_env(home), cwd=cwd, timeout=120, check=False)


def test_every_example_is_listed() -> None:
    assert [p.name for p in EXAMPLES] == sorted(EXPECTED)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_example_runs_offline(example: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    # From another directory, twice: an example starts its workspace afresh on every run.
    for _ in range(2):
        done = _run([str(example)], home, tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
        assert done.stderr == ""
        for line in EXPECTED[example.name]:
            assert line in done.stdout, done.stdout
    workspace = example.stem.replace("_", "-")
    listed = _run(["-m", "segue", "-w", workspace, "history", "windows", "--json"], home,
                  tmp_path)
    assert listed.returncode == 0, listed.stderr
    windows = json.loads(listed.stdout)["windows"]
    assert sum(w["items"] for w in windows) >= 4  # the transcript is on disk, in segue's home
    if example.name == "library_subagents.py":
        # Run twice: the hard clear took the first run's tasks, so the ids are the same.
        every = _run(["-m", "segue", "workspaces", "--json"], home, tmp_path)
        parents = {w["workspaceId"]: w["parent"] for w in json.loads(every.stdout)["workspaces"]}
        assert parents == {workspace: None, f"{workspace}.t1": workspace,
                           f"{workspace}.t2": workspace}
    if example.name == "library_approval.py":
        rules = json.loads((home / "approvals" / "library-approval.json").read_text())
        assert rules["rules"] == [{"regex_match": "file_write:summary\\.md", "action": "allow"}]
