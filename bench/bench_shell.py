"""The bash tool's time bounds, measured here rather than asserted in the tests.

1. A hanging command with a 1 s timeout (a foreground ``sleep`` and a background one holding
   the output pipe): the call returns when the timeout kills the group. Baseline: a command
   that really takes 1 s (``sleep 1``) through the same tool. Goal ≤ 1.5×.
2. A command that leaves a background job holding the pipe (``sleep 30 &``): the call returns
   at most ``DRAIN_SECONDS`` after the shell exits, not when the job does. Baseline: the same
   command without the job, then a sleep of ``DRAIN_SECONDS`` (the wait the tool allows a
   job's last output). Goal ≤ 1.5× (the job is killed after each run).

Each is the median of 5 interleaved runs, with the min–max in the note.
"""

from __future__ import annotations

import os
import signal
import tempfile
from pathlib import Path

from bench.common import Result, interleaved, span_ms
from segue._tools.paths import Workspace
from segue._tools.shell import DRAIN_SECONDS, BashTool

RUNS = 5


def _timeout_rows(bash: BashTool) -> Result:
    hanging = {"command": "sleep 1000 & sleep 100", "timeout": 1}
    one_second = {"command": "sleep 1", "timeout": 10}

    def killed() -> None:
        result = bash.run(hanging)
        assert result["error"]["code"] == "timeout", result

    def baseline() -> None:
        assert bash.run(one_second)["exitCode"] == 0

    seg, base = interleaved([killed, baseline], RUNS)
    return Result(
        name="bash: hanging command killed at a 1 s timeout",
        segue_seconds=seg[0],
        baseline="a 1 s command (sleep 1) through the tool",
        baseline_seconds=base[0],
        goal="<= 1.5x",
        note=f"killed {span_ms(seg, RUNS)}; baseline {span_ms(base, RUNS)}",
    )


def _background_rows(bash: BashTool, tmp: Path) -> Result:
    pid_file = tmp / "bg.pid"
    with_job = {"command": f"sleep 30 & echo $! > {pid_file}; git --version; ls -la /"}
    without = {"command": f"git --version; ls -la /; sleep {DRAIN_SECONDS}"}

    def job() -> None:
        assert bash.run(with_job)["exitCode"] == 0
        os.kill(int(pid_file.read_text()), signal.SIGKILL)

    def baseline() -> None:
        assert bash.run(without)["exitCode"] == 0

    seg, base = interleaved([job, baseline], RUNS)
    return Result(
        name="bash: returns while a background job holds the pipe",
        segue_seconds=seg[0],
        baseline=f"the same command without the job, then sleep {DRAIN_SECONDS}",
        baseline_seconds=base[0],
        goal="<= 1.5x",
        note=f"with the job {span_ms(seg, RUNS)}; without {span_ms(base, RUNS)}",
    )


def run() -> list[Result]:
    with tempfile.TemporaryDirectory(prefix="segue-bench-shell-") as tmp_name:
        tmp = Path(tmp_name)
        bash = BashTool(Workspace.at(tmp))
        return [_timeout_rows(bash), _background_rows(bash, tmp)]
