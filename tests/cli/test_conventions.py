"""Command-line conventions a user relies on: NO_COLOR on a terminal (``run`` and ``demo``,
as ``chat`` already honoured it), ``--json`` writing nothing human to stderr."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.scripted_cli import script

pytest.importorskip("termios")

from tests.chat.terminal import Terminal

ESC = b"\x1b["
MEMORY_LIST = {"name": "memory", "input": {"action": "list"}}


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("SEGUE_HOME", "NO_COLOR")}
    env.update(TERM="xterm", LANG="C.UTF-8", LC_ALL="C.UTF-8", **extra)
    return env


def _on_a_terminal(tmp_path: Path, argv: list[str], **extra: str) -> bytes:
    t = Terminal([sys.executable, "-m", "segue", *argv], cwd=tmp_path, env=_env(**extra))
    try:
        assert t.wait_exit(timeout=120) == 0, t.text[-2000:]
        return t.raw
    finally:
        t.close()


def _run_argv(tmp_path: Path, name: str) -> list[str]:
    model = script(tmp_path / name, [{"text": "", "toolCalls": [MEMORY_LIST]},
                                     {"text": "done"}])
    return ["--home", str(tmp_path / name / "home"), "-w", "ws", "run", "-m", model, "go"]


def test_run_honours_no_color_on_a_terminal(tmp_path: Path) -> None:
    for name in ("coloured", "plain"):
        (tmp_path / name).mkdir()
    coloured = _on_a_terminal(tmp_path, _run_argv(tmp_path, "coloured"))
    plain = _on_a_terminal(tmp_path, _run_argv(tmp_path, "plain"), NO_COLOR="1")
    assert ESC in coloured  # without NO_COLOR the tool line and the meter are styled
    assert b"done" in plain and b"memory" in plain
    assert ESC not in plain


def test_demo_honours_no_color_on_a_terminal(tmp_path: Path) -> None:
    plain = _on_a_terminal(tmp_path, ["--home", str(tmp_path / "home"), "demo"], NO_COLOR="1")
    assert b"Summary" in plain
    assert ESC not in plain


def test_demo_json_writes_nothing_human_to_stderr(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "segue", "--home", str(tmp_path / "home"), "demo", "--json"],
        cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=120, check=False,
        stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["ok"] is True
    assert proc.stderr == ""


def _segue(*args: str, cwd: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in _env(**extra).items()
           if k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")}
    return subprocess.run([sys.executable, "-m", "segue", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=60, check=False,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize(("argv", "fixed"), [
    (["history", "windows", "-w", "proj"], "segue -w proj history windows"),
    (["run", "--home", "/tmp/h", "hi there"], "segue --home /tmp/h run 'hi there'"),
    (["workspaces", "--store=postgresql://db/x"], "segue --store=postgresql://db/x workspaces"),
])
def test_a_global_option_after_the_command_says_where_it_goes(
        tmp_path: Path, argv: list[str], fixed: str) -> None:
    done = _segue(*argv, cwd=tmp_path, SEGUE_HOME=str(tmp_path / "home"))
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert line.endswith(f"is a global option and goes before the command; try: {fixed}")


def _files(home: Path) -> list[str]:
    return sorted(str(p.relative_to(home)) for p in home.rglob("*")) if home.exists() else []


def test_a_refused_command_writes_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    good = script(tmp_path, [{"text": "x"}])
    before = _files(home)
    refused = [
        (("-w", "typo", "compact", "-m", good), 1),  # no such workspace
        (("-w", "ws", "run", "-m", f"scripted:{tmp_path / 'nope.json'}", "hi"), 2),
        (("-w", "ws", "run", "-m", "nosuch:model", "hi"), 2),
        (("-w", "ws", "run", "--agent", "nobody", "-m", good, "hi"), 2),
        (("-w", "ws", "run", "-m", "openai:gpt-4o", "hi"), 1),  # no key: not bad usage
    ]
    for args, status in refused:
        done = _segue("--home", str(home), *args, cwd=tmp_path)
        assert done.returncode == status, (args, done.stderr)
        assert done.stderr.startswith("segue: error: "), (args, done.stderr)
        assert _files(home) == before, args  # no session folder, no segue-workspace.json
    listed = _segue("--home", str(home), "workspaces", cwd=tmp_path)
    assert "typo" not in listed.stdout


def test_a_missing_api_key_exits_1_also_with_json(tmp_path: Path) -> None:
    done = _segue("--home", str(tmp_path / "home"), "-w", "ws", "run", "--json", "-m",
                  "anthropic:claude-sonnet-4-5", "hi", cwd=tmp_path)
    assert done.returncode == 1
    assert "ANTHROPIC_API_KEY" in done.stderr
    assert json.loads(done.stdout)["status"] == "error"


def test_history_search_frames_its_hits_on_a_terminal_and_not_in_a_pipe(tmp_path: Path) -> None:
    home = tmp_path / "home"
    model = script(tmp_path, [{"text": "the parser lives in grammar.ts"}])
    assert _segue("--home", str(home), "-w", "ws", "run", "-m", model, "where is the parser?",
                  cwd=tmp_path).returncode == 0
    argv = ["--home", str(home), "-w", "ws", "history", "search", "parser"]
    on_terminal = _on_a_terminal(tmp_path, argv).decode()
    assert "Searching the whole transcript of workspace ws" in on_terminal
    assert "2 matching item(s)." in on_terminal
    piped = _segue(*argv, cwd=tmp_path)
    assert piped.returncode == 0 and piped.stderr == ""
    hits = piped.stdout.splitlines()
    assert len(hits) == 2 and all(line.startswith("#") for line in hits), piped.stdout
