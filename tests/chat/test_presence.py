"""One chat per workspace, between real processes: the second says who holds the workspace;
the claim ends with the holder, ``kill -9`` included."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("termios")

from tests.chat.terminal import Terminal


def _second(tmp: Path, script: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "segue", "--home", str(tmp / "home"), "-w", "ws", "chat",
         "-m", f"scripted:{script}"],
        input="hello\n", cwd=tmp, capture_output=True, text=True, timeout=60, check=False,
    )


def test_a_second_chat_on_the_workspace_names_the_holder(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"contextWindow": 8000, "encoding": "o200k_base",
                                  "responses": [{"text": "hi"}, {"text": "hi again"}]}))
    env = {k: v for k, v in os.environ.items() if k != "SEGUE_HOME"}
    env.update(TERM="xterm", LANG="C.UTF-8")
    first = Terminal(
        [sys.executable, "-m", "segue", "--home", str(tmp_path / "home"), "-w", "ws", "chat",
         "-m", f"scripted:{script}"], cwd=tmp_path, env=env)
    try:
        first.expect(r" › ")
        busy = _second(tmp_path, script)
        assert busy.returncode == 1
        assert busy.stderr.strip() == (
            f"segue: error: workspace 'ws' already has a chat open (process {first.proc.pid}); "
            "leave that chat first, or chat in another workspace with -w ID")
        assert not (tmp_path / "home" / "sessions" / "ws" / "chat.jsonl").exists()
        os.kill(first.proc.pid, signal.SIGKILL)  # the kernel drops the claim with the process
        first.wait_exit()
    finally:
        first.close()
    free = _second(tmp_path, script)
    assert free.returncode == 0, free.stderr
    assert "hi" in free.stdout
