"""A ``segue run`` SIGKILL'd in the middle of a rollover, then a new ``segue run`` (R5, R7, R8,
R21, R28): no duplicated rollover, no resurrected continuation, and ``segue history verify``
clean once a locked operation has recovered.

Real processes, real ``kill -9``, no test hooks in the engine. The crash point is pinned with
the scripted provider's ``requestLog``: during the killed run it is a FIFO, so the process
blocks (in ``open``) at each provider step until the test reads the request. That makes
three kinds of kill deterministic or bounded:

* ``before``: killed while blocked at the step *before* the rollover (nothing sealed yet);
* ``after``: killed while blocked at the send right *after* the batch was appended;
* ``random``: the first request is let through, then a random short delay; the kill lands
  somewhere between that step and the send after the append (tool run, settled check,
  admission, the batch append and its rotation), and the FIFO stops the run there at worst.

The restarted run gets a regular requestLog and the same script, whose position persists
across processes (``FilePosition`` under ``SEGUE_HOME/providers``).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest
from click.testing import CliRunner

from segue import HistoryStore, Layout, Row
from tests.conftest import scaled
from tests.front import (
    CONTINUATION_FLAG,
    cli,
    is_rollover_boundary,
    is_synthetic_continuation,
    logged_requests,
)

WS = "killed"
DEADLINE_SECONDS = 60.0
Scenario = Literal["mid-stream", "on-send"]
KillPoint = Literal["before", "after", "random"]
BIG_USAGE = {"inputTokens": 6500, "outputTokens": 10}  # over 75 % of 8000: rolls over


@dataclass
class Setup:
    home: Path
    work: Path
    script: Path
    log: Path

    @property
    def layout(self) -> Layout:
        return Layout(self.home, WS)

    def argv(self, prompt: str) -> list[str]:
        return [
            sys.executable, "-m", "segue", "--home", str(self.home), "-w", WS,
            "run", "-m", f"scripted:{self.script}", "--json", prompt,
        ]  # fmt: skip


def make_setup(tmp: Path, scenario: Scenario) -> Setup:
    home, work = tmp / "home", tmp / "work"
    work.mkdir(parents=True)
    log = tmp / "requests.jsonl"
    history_call = {"name": "session_history", "input": {"action": "list_windows"}}
    if scenario == "mid-stream":
        # Step 1 calls a tool and reports usage past the trigger: the settled step rolls over.
        first: dict[str, Any] = {"toolCalls": [history_call], "usage": BIG_USAGE}
    else:
        # Run 1 answers with usage past the trigger: run 2's send rolls over.
        first = {"text": "a long answer", "usage": BIG_USAGE}
    responses = [first, *({"text": f"answer {n}"} for n in range(1, 6))]
    script = tmp / "script.json"
    script.write_text(
        json.dumps(
            {
                "contextWindow": 8000,
                "encoding": "o200k_base",
                "requestLog": str(log),
                "responses": responses,
            }
        )
    )
    s = Setup(home, work, script, log)
    segue_in_process(s, "settings", "set", "experiments.tokenBudget", "true")
    if scenario == "on-send":
        out = json.loads(segue_in_process(s, "run", "-m", f"scripted:{script}", "--json", "first"))
        assert {k: out[k] for k in ("status", "reason", "windowId", "rollovers")} == {
            "status": "completed", "reason": None, "windowId": "w:0", "rollovers": 0}
    return s


def segue_in_process(s: Setup, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--home", str(s.home), "-w", WS, *args])
    assert result.exit_code == code, result.output
    return result.stdout


def rows(s: Setup) -> list[Row]:
    """What a reader sees (no recovery: readers never run it)."""
    return list(HistoryStore(s.layout, durable=False).rows())


def rollovers(rs: list[Row]) -> list[Row]:
    return [r for r in rs if is_rollover_boundary(r)]


def chat_bytes(s: Setup) -> bytes:
    return s.layout.chat.read_bytes() if s.layout.chat.exists() else b""


def wait_for(
    proc: subprocess.Popen[bytes], what: str, ready: Callable[[], bool]
) -> None:
    """Poll for a state of the killed run's files; fail if the process ends first."""
    deadline = time.monotonic() + DEADLINE_SECONDS
    while not ready():
        if proc.poll() is not None:
            _, err = proc.communicate()
            pytest.fail(f"segue run ended (rc {proc.returncode}) before {what}: {err.decode()}")
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.001)


def read_one_request(proc: subprocess.Popen[bytes], fifo: Path) -> None:
    """Let one provider step through: read its request line from the FIFO, then close our
    end so that the next step blocks again."""
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    data = b""
    try:
        deadline = time.monotonic() + DEADLINE_SECONDS
        while not data.endswith(b"\n"):
            try:
                chunk = os.read(fd, 1 << 16)
            except BlockingIOError:
                chunk = b""
            data += chunk
            if not chunk:
                if proc.poll() is not None:
                    err = proc.communicate()[1].decode()
                    pytest.fail(f"segue run ended (rc {proc.returncode}) before a request: {err}")
                if time.monotonic() > deadline:
                    proc.kill()
                    pytest.fail("timed out waiting for the first request")
                time.sleep(0.001)
    finally:
        os.close(fd)


def kill_during_rollover(
    s: Setup, scenario: Scenario, point: KillPoint, delay: float, prompt: str
) -> bool:
    """Start the run and SIGKILL it at ``point``. Returns False in the one case the kill can
    come too late: the run slipped past the FIFO in the moment between the test reading a
    request and closing its end, and finished its turn."""
    if s.log.exists():
        s.log.unlink()
    os.mkfifo(s.log)
    proc = subprocess.Popen(
        s.argv(prompt), cwd=s.work, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        if point == "before":
            assert scenario == "mid-stream", "on send, nothing blocks before the rollover"
            # The user's message is durable; the run now blocks at its first step.
            wait_for(proc, "the user's message", lambda: prompt.encode() in chat_bytes(s))
        elif point == "after":
            if scenario == "mid-stream":
                read_one_request(proc, s.log)
            wait_for(
                proc,
                "the complete rollover batch",
                lambda: _complete_batch_on_disk(s, scenario, prompt),
            )
        else:
            if scenario == "mid-stream":
                read_one_request(proc, s.log)
            time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        _, err = proc.communicate()
        if proc.returncode == 0:
            return False
        assert proc.returncode == -signal.SIGKILL, err.decode()
        return True
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        s.log.unlink()


def _complete_batch_on_disk(s: Setup, scenario: Scenario, prompt: str) -> bool:
    data = chat_bytes(s)
    trigger = CONTINUATION_FLAG.encode() if scenario == "mid-stream" else prompt.encode()
    boundary = data.find(b'"context-window-rollover"')
    return boundary >= 0 and data.endswith(b"\n") and data.find(trigger, boundary) > 0


def restart_and_check(s: Setup, sealed_before: list[Row], prompt: str) -> str:
    """Restart, check, and say whether the killed run had published its batch."""
    visible = rows(s)
    killed_batch = len(rollovers(visible)) > len(sealed_before)

    restarted = subprocess.run(
        s.argv(prompt), cwd=s.work, stdin=subprocess.DEVNULL, capture_output=True,
        timeout=DEADLINE_SECONDS, check=False,
    )
    assert restarted.returncode == 0, restarted.stderr.decode()
    closing = json.loads(restarted.stdout.decode().strip().splitlines()[-1])
    assert closing["status"] == "completed"

    after = rows(s)
    sealed = rollovers(after)
    previous = [r.metadata["muxMetadata"]["previousWindowId"] for r in sealed]
    # No window is ever sealed twice, and the scenario has only one window to seal.
    assert len(previous) == len(set(previous)), previous
    assert len(sealed) <= 1
    if killed_batch:
        assert closing["rollovers"] == 0, "the restarted run rolled the same window over again"
    assert sum(r.sequence == sealed[0].sequence for r in after) == 1 if sealed else True
    # Every rollover batch is whole: a boundary is followed by its lead-in and its trigger.
    for boundary in sealed:
        index = next(i for i, r in enumerate(after) if r.id == boundary.id)
        assert after[index + 1].mux_type == "context-window-lead-in"
        assert after[index + 2].role == "user"

    # R7: the restarted run's first request answers the new message; nothing queued by the
    # killed run is sent on its own.
    requests = logged_requests(s.log)
    assert requests, "the restarted run sent nothing"
    first = requests[0]
    assert first.rows[-1].text == prompt
    assert not first.rows[-1].flag("synthetic")
    assert sum(is_synthetic_continuation(r) for r in first.rows) <= 1

    # The restarted run was a locked operation: whatever the kill tore has been recovered.
    # (``verify`` only reads, so it runs in this process.)
    segue_in_process(s, "history", "verify")
    return "batch" if killed_batch else "no-batch"


def one_kill(tmp: Path, scenario: Scenario, point: KillPoint, delay: float = 0.0) -> str:
    s = make_setup(tmp, scenario)
    sealed_before = rollovers(rows(s))
    if not kill_during_rollover(s, scenario, point, delay, "second"):
        restart_and_check(s, sealed_before, "third")
        return "finished"
    return restart_and_check(s, sealed_before, "third")


@pytest.mark.parametrize(
    ("scenario", "point"), [("mid-stream", "before"), ("mid-stream", "after"), ("on-send", "after")]
)
def test_kill_at_a_pinned_point_of_the_rollover(
    tmp_path: Path, scenario: Scenario, point: KillPoint
) -> None:
    for attempt in range(3):
        outcome = one_kill(tmp_path / f"a{attempt}", scenario, point)
        if outcome != "finished":  # a missed pin (see kill_during_rollover): try again
            break
    assert outcome == ("no-batch" if point == "before" else "batch")


#: fixed seeds, so every run kills at the same moments and a failure replays as it is;
#: ``SEGUE_KILL_SEED`` tries another one by hand
KILL_SEEDS = (11, 2024, 90210)


@pytest.mark.parametrize(
    "seed", [int(os.environ["SEGUE_KILL_SEED"])] if "SEGUE_KILL_SEED" in os.environ else KILL_SEEDS
)
def test_kill_at_random_points_of_the_rollover(tmp_path: Path, seed: int) -> None:
    """Pseudo-random delays cover the span between the step before the rollover and the send
    after it; the seed is in the failure message so a failing point can be replayed."""
    rng = random.Random(seed)
    for n in range(scaled(2, 14)):  # per seed; both scenarios each time
        scenario: Scenario = "mid-stream" if n % 2 == 0 else "on-send"
        # Mid-stream: the span after the first step is a few tens of milliseconds. On send:
        # the delay counts from process start, so it reaches into start-up and admission.
        delay = rng.uniform(0.0, 0.06) if scenario == "mid-stream" else rng.uniform(0.3, 1.5)
        try:
            outcome = one_kill(tmp_path / f"i{n}", scenario, "random", delay)
            if os.environ.get("SEGUE_KILL_TRACE"):
                print(f"{scenario} {delay:.4f}s → {outcome}")
        except AssertionError as exc:
            raise AssertionError(f"seed {seed}, iteration {n} ({scenario}, {delay:.4f}s)") from exc
