"""`segue history search` finds exactly what its banner says it searches, whichever way it
answers (a scan, the history index, the index plus rows appended after it), and exits as
grep does: 0 on a match, 1 on none, 2 on an error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tests.cli.test_history_cli import write_session
from tests.front import cli

WS = "scope"

#: The banner's claims, each with a phrase only that kind of text holds in the fixture.
FOUND = {
    "a window before the newest /clear --soft": "Lint passed",
    "the first window": "entry point",
    "rejected input": "PASTED-LOG",
    "a tool call's output": "preload.py",
    "a compaction summary": "README was drafted",
}
NOT_FOUND = {
    "a hidden rollover lead-in": "fresh context window",
    "reasoning": "PRIVATE-THOUGHT",
}


def segue(home: Path, *args: str, store: str | None = None) -> Result:
    where = ["--store", store] if store is not None else []
    return CliRunner().invoke(cli, ["--home", str(home), *where, "-w", WS, *args])


def imported(home: Path, tmp_path: Path) -> Path:
    result = segue(home, "history", "import", str(write_session(tmp_path / "s.jsonl")))
    assert result.exit_code == 0, result.output
    return home


def check_scope(home: Path, store: str | None = None) -> None:
    for what, phrase in FOUND.items():
        result = segue(home, "history", "search", phrase, "--json", store=store)
        assert result.exit_code == 0, (what, result.output)
        assert json.loads(result.stdout)["items"], what
    for what, phrase in NOT_FOUND.items():
        result = segue(home, "history", "search", phrase, "--json", store=store)
        assert result.exit_code == 1, (what, result.output)
        assert json.loads(result.stdout)["items"] == [], what


def test_the_banner_names_what_is_searched(tmp_path: Path) -> None:
    home = imported(tmp_path / "home", tmp_path)
    result = segue(home, "history", "search", "Lint passed", "--json")
    banner = json.loads(result.stdout)["scope"]  # the banner a terminal shows first
    assert banner == (
        f"Searching the whole transcript of workspace {WS}: every item of every window, including "
        "what the agent cannot see (text before a /clear --soft, rejected input); hidden rows and "
        "reasoning are not items and are not searched."
    )
    assert "every window" in banner and "before a /clear --soft" in banner
    assert "rejected input" in banner
    assert "hidden rows and reasoning are not" in banner


@pytest.mark.parametrize("index", ["scan", "index", "index and tail"])
def test_search_finds_what_the_banner_says(tmp_path: Path, index: str) -> None:
    home = imported(tmp_path / "home", tmp_path)
    if index != "scan":
        assert segue(home, "history", "reindex").exit_code == 0
    if index == "index and tail":  # rows the index has not read yet
        assert segue(home, "history", "import", str(tmp_path / "s.jsonl")).exit_code == 0
    check_scope(home)


def test_exit_status_is_greps(tmp_path: Path) -> None:
    home = imported(tmp_path / "home", tmp_path)
    assert segue(home, "history", "search", "entry point").exit_code == 0
    none = segue(home, "history", "search", "no such words")
    assert (none.exit_code, none.stdout) == (1, "")  # in a pipe: no "No matches." line
    none_json = segue(home, "history", "search", "no such words", "--json")
    assert none_json.exit_code == 1
    assert json.loads(none_json.stdout)["items"] == []
    empty = segue(home, "history", "search", "")
    assert empty.exit_code == 2
    assert empty.stdout == ""  # refused before the banner
    assert empty.stderr == "segue: error: the search query must not be empty\n"


def test_an_unreadable_transcript_exits_2(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "sessions" / WS / "chat.jsonl").mkdir(parents=True)
    result = segue(home, "history", "search", "anything")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1].startswith("segue: error: cannot read ")


def test_help_states_the_exit_status() -> None:
    result = CliRunner().invoke(cli, ["history", "search", "--help"])
    text = " ".join(result.stdout.split())
    assert "0 when an item matches, 1 when none does" in text
    assert "2 on an error" in text


def test_exit_status_from_a_real_process(tmp_path: Path) -> None:
    """The same through `python -m segue`, the way a shell script sees it."""
    home = imported(tmp_path / "home", tmp_path)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}

    def status(*args: str) -> tuple[int, str]:
        proc = subprocess.run(
            [sys.executable, "-m", "segue", "--home", str(home), *args], env=env,
            capture_output=True, text=True, timeout=60, check=False, stdin=subprocess.DEVNULL,
        )
        return proc.returncode, proc.stderr

    assert status("-w", WS, "history", "search", "entry point") == (0, "")
    assert status("-w", WS, "history", "search", "no such words") == (1, "")
    assert status("-w", WS, "history", "search", "")[0] == 2
    code, err = status("-w", "typo", "history", "search", "entry point")
    assert code == 1
    assert err.startswith("segue: error: no workspace typo ")
