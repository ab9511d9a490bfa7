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
