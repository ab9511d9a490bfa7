"""bash: exit codes, pinned working directory, closed stdin, output caps, and a hanging
command killed at its timeout together with its whole process group (real processes)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from segue._tools.paths import Workspace
from segue._tools.shell import OUTPUT_HALF, BashTool


def _gone(pid: int) -> bool:
    """Whether ``pid`` no longer runs (a zombie waiting for its reaper counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def _wait_gone(pids: list[int], seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if all(_gone(p) for p in pids):
            return True
        time.sleep(0.01)
    return False


def test_exit_code_output_and_working_directory(ws: Workspace) -> None:
    bash = BashTool(ws)
    result = bash.run({"command": "pwd; echo err >&2; exit 3"})
    assert result["ok"] is True and result["exitCode"] == 3
    assert result["output"] == f"{ws.root}\nerr\n"
    assert result["outputBytes"] == len(result["output"].encode())
    assert result["truncated"] is False
    (ws.root / "sub").mkdir()
    assert bash.run({"command": "cd sub && pwd"})["output"].strip() == str(ws.root / "sub")
    assert bash.run({"command": "pwd"})["output"].strip() == str(ws.root)  # no state kept


def test_stdin_is_closed(ws: Workspace) -> None:
    # An open stdin would block cat until the timeout: the call would end in a timeout error.
    result = BashTool(ws).run({"command": "cat; read line; echo status=$?", "timeout": 10})
    assert result["ok"] is True
    assert result["exitCode"] == 0 and "status=1" in result["output"]


def test_output_is_capped_to_head_and_tail_with_the_byte_count(ws: Workspace) -> None:
    command = "echo FIRST; head -c 1000000 /dev/zero | tr '\\0' x; echo; echo LAST"
    result = BashTool(ws).run({"command": command})
    assert result["truncated"] is True
    assert result["outputBytes"] == len("FIRST\n") + 1_000_000 + 1 + len("LAST\n")
    assert result["output"].startswith("FIRST\n") and result["output"].endswith("LAST\n")
    assert f"bytes omitted of {result['outputBytes']}" in result["output"]
    assert len(result["output"].encode()) <= 2 * OUTPUT_HALF + 100


def test_a_hanging_command_is_killed_with_its_process_group(ws: Workspace, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    command = (f"sleep 1000 & echo $! > {pids}; echo $$ >> {pids}; echo started; sleep 100; "
               "echo finished")
    result = BashTool(ws).run({"command": command, "timeout": 1})
    # Killed at the timeout, not waited for: the command never got to its last line, and
    # (below) the background sleep, which would outlive any wait, is gone too. How soon after
    # the timeout the call returns is measured in bench/bench_shell.py.
    assert result["ok"] is False and result["error"]["code"] == "timeout"
    assert result["exitCode"] is None and "started" in result["output"]
    assert "finished" not in result["output"]
    group = [int(p) for p in pids.read_text().split()]
    assert len(group) == 2
    assert _wait_gone(group), "the background sleep or the shell survived the timeout"


def test_a_background_job_holding_the_pipe_does_not_block_the_call(
    ws: Workspace, tmp_path: Path
) -> None:
    pid_file = tmp_path / "bg"
    result = BashTool(ws).run({"command": f"sleep 30 & echo $! > {pid_file}; echo done"})
    assert result["exitCode"] == 0 and result["output"] == "done\n"
    pid = int(pid_file.read_text())
    assert not _gone(pid)  # the call returned while the job still held the pipe
    os.kill(pid, 9)  # the job outlives the call by design; do not leave it behind
    assert _wait_gone([pid])


def test_bad_arguments(ws: Workspace) -> None:
    bash = BashTool(ws)
    assert bash.run({"command": ""})["error"]["code"] == "invalid_argument"
    assert bash.run({"command": "true", "timeout": 601})["error"]["code"] == "invalid_argument"
    assert bash.run({"command": "true", "timeout": 0})["error"]["code"] == "invalid_argument"
    assert bash.run({"command": "true", "timeout": True})["error"]["code"] == "invalid_argument"
    killed = bash.run({"command": "kill -SEGV $$"})
    assert killed["exitCode"] is None and killed["signal"] == "SIGSEGV"


def test_a_cancelled_turn_kills_the_running_command(ws: Workspace, tmp_path: Path) -> None:
    """Ctrl-C cancels the turn; the command runs in its own session, so the tool itself must
    notice and kill its group instead of running on to its timeout."""
    pids = tmp_path / "pids"
    marker = tmp_path / "started"
    command = (f"sleep 1000 & echo $! > {pids}; echo $$ >> {pids}; touch {marker}; sleep 100; "
               "echo finished")

    def cancelled() -> bool:
        return marker.exists()  # cancel as soon as the command is under way

    result = BashTool(ws).run_cancellable({"command": command, "timeout": 60}, cancelled)
    assert result["ok"] is False
    assert result["error"]["code"] == "interrupted"  # not run on to its timeout
    assert "finished" not in result.get("output", "")
    group = [int(p) for p in pids.read_text().split()]
    assert _wait_gone(group), "the command survived the cancelled turn"
