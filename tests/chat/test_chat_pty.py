"""``segue chat`` in a real terminal (a pseudo-terminal), with the scripted provider.

Ctrl-C mid-turn is made deterministic with the scripted provider's ``requestLog`` pointed at
a FIFO: each provider step opens it to log its request, and opening a FIFO for writing waits
for a reader, so a :class:`RequestGate` decides when each step may go on. That is exactly a
slow provider call: the step is in flight while the test presses Ctrl-C.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("termios")

from segue import HistoryStore, Layout
from tests.chat.request_gate import RequestGate
from tests.chat.scripts import check_interrupted_turn, write_interrupted_turn
from tests.chat.terminal import Terminal

PROMPT = r"\[\d+% · rolls over (by 75%|with the next message)\] › "
WORKSPACE = "ws"


def _segue(home: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "segue", "--home", str(home), "-w", WORKSPACE, *args],
        cwd=cwd, capture_output=True, text=True, timeout=60, check=False,
    )


def _reply(tag: str, words: int) -> dict[str, Any]:
    return {"text": " ".join(f"{tag.lower()}{i % 10}" for i in range(words)) + f" {tag}"}


@pytest.fixture
def env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("SEGUE_HOME", "NO_COLOR")}
    env.update(TERM="xterm", LANG="C.UTF-8", LC_ALL="C.UTF-8")
    return env


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    done = _segue(home, "settings", "set", "experiments.tokenBudget", "true", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return home


def _chat(tmp: Path, home: Path, script: Path, env: dict[str, str],
          terminals: list[Terminal]) -> Terminal:
    terminal = Terminal(
        [sys.executable, "-m", "segue", "--home", str(home), "-w", WORKSPACE, "chat",
         "-m", f"scripted:{script}", "--approve", "full"],  # approval: test_approval_pty
        cwd=tmp, env=env,
    )
    terminals.append(terminal)
    return terminal


def _percent(match: re.Match[str]) -> int:
    return int(match.group(0).lstrip("[").split("%")[0])


def test_a_session_that_rolls_over_then_soft_clears(
    tmp_path: Path, home: Path, env: dict[str, str], terminals: list[Terminal]
) -> None:
    script = tmp_path / "script.json"
    # Each long reply takes about 36% of the window, whatever the system text and the tool
    # schemas take (up to about a third): one reply leaves room, two reach the threshold.
    script.write_text(json.dumps({
        "contextWindow": 20000,
        "encoding": "o200k_base",
        "responses": [_reply("REPLY-ONE", 2400), _reply("REPLY-TWO", 2400),
                      _reply("REPLY-THREE", 40), _reply("REPLY-FOUR", 20)],
    }))
    t = _chat(tmp_path, home, script, env, terminals)
    t.expect(r"\[segue\] segue chat · workspace ws")
    start = _percent(t.expect(PROMPT))

    t.type("first message")
    t.expect(r"reply-one0 reply-one1 reply-one2")  # the reply streams onto the screen
    t.expect(r"REPLY-ONE")
    after_one = _percent(t.expect(PROMPT))
    assert after_one > start

    t.type("second message")
    t.expect(r"REPLY-TWO")
    assert _percent(t.expect(PROMPT)) >= 75  # so the next send rolls over

    t.type("third message")
    t.expect(r"─+ Context window rollover ─+")
    t.expect(r"\[segue\] w:0 → w:\d+ \(on-send")  # exactly one rollover: from the root
    t.expect(r"REPLY-THREE")
    fresh = _percent(t.expect(PROMPT))
    assert fresh < after_one

    t.type("/clear --soft")
    t.expect(r"─+ Context cleared ─+")
    t.expect(r"\[segue\] the next message starts a fresh context window")
    t.expect(PROMPT)
    t.type("after the reset")
    t.expect(r"REPLY-FOUR")
    t.expect(PROMPT)
    t.send("\x04")  # Ctrl-D
    assert t.wait_exit() == 0

    windows = _segue(home, "history", "windows", "--json", cwd=tmp_path)
    assert windows.returncode == 0, windows.stderr
    listed = json.loads(windows.stdout)["windows"]
    assert [w["kind"] for w in listed] == ["root", "rollover", "reset"]
    assert [w["items"] for w in listed] == [4, 2, 2]
    assert _segue(home, "history", "verify", cwd=tmp_path).returncode == 0




def test_ctrl_c_mid_turn_returns_to_the_prompt_with_the_transcript_intact(
    tmp_path: Path, home: Path, env: dict[str, str], terminals: list[Terminal]
) -> None:
    gate = RequestGate(tmp_path / "requests.fifo")
    script = tmp_path / "script.json"
    # Interrupted after step 1 (or, if Ctrl-C lands while step 2 is in flight, after step 2),
    # the turn never reaches its answer; the next message then reaches FOLLOW-UP either way.
    write_interrupted_turn(script, gate.path)
    t = _chat(tmp_path, home, script, env, terminals)
    t.expect(PROMPT)
    t.type("go")
    gate.allow_one()
    gate.wait_passed(1)
    t.expect(r"⚙ memory")
    t.expect(r"    → \S")  # step 1's tool result is shown: the step has settled
    t.send("\x03")  # Ctrl-C while the turn is still running (step 2 is held at the gate)
    # The step held at the gate is a provider call in flight: the stop does not wait for it.
    t.expect(r"\[segue\] interrupting: stopping the turn")
    t.expect(r"\[segue\] (cancelled (after a settled tool step|before a provider step)"
             r"|interrupted before the model replied)")
    t.expect(r"\[segue\] turn interrupted; the steps that settled are kept")
    gate.open_wide()
    t.expect(PROMPT)
    assert "FOLLOW-UP" not in t.text

    t.type("carry on")
    t.expect(r"FOLLOW-UP")
    t.expect(PROMPT)
    t.reading()
    t.send("\x03")
    t.expect(r"Ctrl-C again or Ctrl-D to leave")
    t.expect(PROMPT)
    t.reading()
    t.send("\x03")
    assert t.wait_exit() == 130  # left with Ctrl-C: a program stopped by SIGINT

    assert _segue(home, "history", "verify", cwd=tmp_path).returncode == 0
    rows = list(HistoryStore(Layout(home, WORKSPACE), durable=False).rows())
    check_interrupted_turn(rows)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_second_ctrl_c_during_a_shell_command_quits_and_kills_the_command(
    tmp_path: Path, home: Path, env: dict[str, str], terminals: list[Terminal]
) -> None:
    script = tmp_path / "script.json"
    command = "echo $$ > sleeper.pid; exec sleep 300"
    script.write_text(json.dumps({
        "contextWindow": 20000,
        "encoding": "o200k_base",
        "responses": [{"text": "", "toolCalls": [{"name": "bash", "input": {"command": command}}]},
                      {"text": "never reached"}],
    }))
    t = _chat(tmp_path, home, script, env, terminals)
    t.expect(PROMPT)
    t.type("run it")
    t.expect(r"⚙ bash")
    pid_file = tmp_path / "sleeper.pid"
    deadline = time.monotonic() + 30
    while not (pid_file.exists() and pid_file.read_text().strip()):
        assert time.monotonic() < deadline, "the command never started"
        t.pump(0.05)  # keeps reading the terminal while polling
    pid = int(pid_file.read_text())
    t.send("\x03")
    t.expect(r"\[segue\] interrupting")
    t.send("\x03")
    t.expect(r"\[segue\] quitting; every settled step is on disk")
    assert t.wait_exit() == 130
    deadline = time.monotonic() + 30
    while _alive(pid):  # the tool killed its process group on the way out
        assert time.monotonic() < deadline, f"the shell command {pid} outlived segue chat"
        threading.Event().wait(0.05)
    assert "never reached" not in t.text
    assert _segue(home, "history", "verify", cwd=tmp_path).returncode == 0
