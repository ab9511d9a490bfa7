"""``segue run``'s prompt from -f FILE, from -, and from a pipe (with and without PROMPT), and
its approval: denied by default with a durable result, allowed with --approve (R38)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from segue.history import HistoryStore
from segue.workspace import Layout

WS = "runs"


def _run(tmp: Path, *args: str, stdin: str | None = None,
         responses: list[dict[str, Any]] | None = None) -> subprocess.CompletedProcess[str]:
    script = tmp / "script.json"
    script.write_text(json.dumps({"contextWindow": 200000, "encoding": "o200k_base",
                                  "responses": responses or [{"text": "OK"}]}))
    return subprocess.run(
        [sys.executable, "-m", "segue", "--home", str(tmp / "home"), "-w", WS, "run",
         "-m", f"scripted:{script}", *args],
        input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL,
        cwd=tmp, capture_output=True, text=True, timeout=120, check=False,
    )


def _user_texts(tmp: Path) -> list[str]:
    return [r.text for r in HistoryStore(Layout(tmp / "home", WS)).rows() if r.role == "user"]


def test_a_200_kb_prompt_from_a_file(tmp_path: Path) -> None:
    big = "".join(f"line {i} of a long log\n" for i in range(9000))
    assert len(big) > 200_000
    (tmp_path / "big.txt").write_text(big)
    done = _run(tmp_path, "-f", "big.txt")
    assert done.returncode == 0, done.stderr
    assert _user_texts(tmp_path) == [big]


def test_dash_reads_standard_input(tmp_path: Path) -> None:
    done = _run(tmp_path, "-", stdin="from the pipe\n")
    assert done.returncode == 0, done.stderr
    assert _user_texts(tmp_path) == ["from the pipe\n"]


def test_a_pipe_and_a_prompt_are_both_sent(tmp_path: Path) -> None:
    done = _run(tmp_path, "explain", stdin="Traceback: boom\n")
    assert done.returncode == 0, done.stderr
    assert _user_texts(tmp_path) == ["explain\n\nTraceback: boom\n"]


def test_no_prompt_at_all_is_bad_usage(tmp_path: Path) -> None:
    done = _run(tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "segue: error: no prompt: give PROMPT, -f FILE, or pipe it on standard input (or -)")


def test_bash_is_denied_without_approval_and_runs_with_approve_full(tmp_path: Path) -> None:
    call = {"text": "", "toolCalls": [{"name": "bash", "input": {"command": "touch made"}}]}
    done = _run(tmp_path, "--json", "go", responses=[call, {"text": "told"}])
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "made").exists()
    rows = list(HistoryStore(Layout(tmp_path / "home", WS)).rows())
    outputs = [p.output for r in rows for p in r.parts if p.type == "dynamic-tool"]
    assert outputs[0]["error"]["code"] == "approval_denied"
    assert "--approve" in outputs[0]["error"]["message"]
    assert json.loads(done.stdout.splitlines()[-1])["text"] == "told"

    again = _run(tmp_path, "--approve", "full", "go", responses=[call, {"text": "done"}])
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "made").exists()


def test_ctrl_c_stops_the_run_at_its_next_safe_point_with_exit_130(tmp_path: Path) -> None:
    fifo = tmp_path / "requests.fifo"
    os.mkfifo(fifo)
    script = tmp_path / "script.json"
    # Each step opens the FIFO to log its request and waits there for this test to read it:
    # a provider call in flight, held while SIGINT arrives.
    script.write_text(json.dumps({
        "contextWindow": 200000, "encoding": "o200k_base", "requestLog": str(fifo),
        "responses": [{"text": "", "toolCalls": [{"name": "memory", "input": {"command": "view"}}]},
                      {"text": "NEVER"}],
    }))
    proc = subprocess.Popen(
        [sys.executable, "-m", "segue", "--home", str(tmp_path / "home"), "-w", WS, "run",
         "-m", f"scripted:{script}", "go on"],
        cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    try:
        layout = Layout(tmp_path / "home", WS)
        deadline = time.monotonic() + 60
        while not (layout.chat.exists() and b"go on" in layout.chat.read_bytes()):
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGINT)  # the first step is held at the FIFO
        with fifo.open("rb") as held:
            held.read()  # let the step finish: it settles, then the turn stops
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err.decode()
    assert b"NEVER" not in out
    assert err.decode().count("segue: interrupted: the steps that settled are kept") == 1
    rows = list(HistoryStore(layout).rows())
    assert [r.role for r in rows] == ["user", "assistant"]  # the settled step stayed
