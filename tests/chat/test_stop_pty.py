"""R40 in real terminals: Ctrl-C stops a reply that is still streaming, in ``segue chat`` and
``segue run``, against a local OpenAI-compatible server whose reply never ends on its own
(tests/slow_server.py: the words, then silence). Nothing here waits for the reply's end, so a
front end that cannot stop it fails on the deadline instead of passing late."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("termios")
pytest.importorskip("openai")

from segue import HistoryStore, Layout
from tests.chat.terminal import Terminal
from tests.slow_server import SlowServer

WORKSPACE = "ws"
MODEL = "openai-compatible:slow"
WORDS = ["one", "two", "three", "four", "five"]
#: How long the test waits for the stop; the server stays silent far longer than this.
STOP_DEADLINE = 10.0


def _segue(home: Path, *args: str, cwd: Path,
           env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "segue", "--home", str(home), "-w", WORKSPACE, *args],
        cwd=cwd, capture_output=True, text=True, timeout=60, check=False, env=env,
    )


@pytest.fixture
def server() -> Iterator[SlowServer]:
    srv = SlowServer(WORDS)
    yield srv
    srv.close()


@pytest.fixture
def env(server: SlowServer) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("SEGUE_HOME", "NO_COLOR")}
    env.update(TERM="xterm", LANG="C.UTF-8", LC_ALL="C.UTF-8",
               OPENAI_COMPATIBLE_BASE_URL=server.base_url)
    return env


@pytest.fixture
def home(tmp_path: Path, env: dict[str, str]) -> Path:
    home = tmp_path / "home"
    for key, value in ((f"contextWindow.{MODEL}", "32000"), (f"encoding.{MODEL}", "o200k_base")):
        done = _segue(home, "settings", "set", key, value, cwd=tmp_path, env=env)
        assert done.returncode == 0, done.stderr
    return home


def _replies(home: Path) -> list[tuple[str, bool]]:
    rows = HistoryStore(Layout(home, WORKSPACE), durable=False).rows()
    return [(r.text, r.metadata.get("partial") is True) for r in rows if r.role == "assistant"]


def test_ctrl_c_in_the_line_chat_stops_the_streaming_reply(
    tmp_path: Path, home: Path, env: dict[str, str], server: SlowServer,
    terminals: list[Terminal],
) -> None:
    t = Terminal([sys.executable, "-m", "segue", "--home", str(home), "-w", WORKSPACE, "chat",
                  "-m", MODEL], cwd=tmp_path, env=env)
    terminals.append(t)
    t.expect(r"› ")
    t.type("count to five")
    t.expect(r"one two three four five")
    assert server.stalled.wait(STOP_DEADLINE)  # every word is out; the reply has not ended
    t.send("\x03")
    t.expect(r"\[segue\] interrupted: the reply was stopped; the text received so far is kept",
             timeout=STOP_DEADLINE)
    t.expect(r"› ", timeout=STOP_DEADLINE)
    assert _replies(home) == [("one two three four five ", True)]

    # The workspace is ready for the next message, which carries the stopped reply.
    server.stall = False
    t.type("and again")
    t.expect(r"› ")
    assert server.requests[-1]["messages"][-2] == {"role": "assistant",
                                                   "content": "one two three four five "}
    t.send("\x04")
    assert t.wait_exit() == 0


def test_ctrl_c_in_segue_run_stops_the_reply_and_exits_130(
    tmp_path: Path, home: Path, env: dict[str, str], server: SlowServer,
    terminals: list[Terminal],
) -> None:
    t = Terminal([sys.executable, "-m", "segue", "--home", str(home), "-w", WORKSPACE, "run",
                  "-m", MODEL, "count to five"], cwd=tmp_path, env=env)
    terminals.append(t)
    t.expect(r"one two three")
    t.send("\x03")
    t.expect(r"segue: interrupted", timeout=STOP_DEADLINE)
    assert t.wait_exit(timeout=STOP_DEADLINE) == 130
    ((text, partial),) = _replies(home)
    assert partial and text.startswith("one two three ")


def test_sigint_to_segue_run_json_reports_an_interrupted_turn(
    tmp_path: Path, home: Path, env: dict[str, str], server: SlowServer,
) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "segue", "--home", str(home), "-w", WORKSPACE, "run", "-m",
         MODEL, "--json", "count to five"],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        stdin=subprocess.DEVNULL,
    )
    try:
        assert server.stalled.wait(30)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=STOP_DEADLINE)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    closing = json.loads(out.strip().splitlines()[-1])
    assert closing["status"] != "completed"
    assert closing["status"] == "paused" and "interrupted" in closing["reason"]
    assert closing["text"] == "one two three four five "
    assert _replies(home) == [("one two three four five ", True)]
