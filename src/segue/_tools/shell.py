"""``bash``: run a shell command in the workspace directory, bounded in time and output.

Invariants:

* The command runs with ``bash -c`` (``sh -c`` where bash is missing) in the workspace
  directory, stdin closed (``/dev/null``: nothing can wait for keyboard input), stderr merged
  into stdout in arrival order, in a **new session** so it is the leader of its own process
  group.
* At the timeout (default ``DEFAULT_TIMEOUT`` s, at most ``MAX_TIMEOUT`` s) the whole process
  group is killed with SIGKILL, children included, and the call returns promptly with what
  was printed so far. The same happens when the caller is interrupted (Ctrl-C) mid-command.
* Output is kept as its first and last ``OUTPUT_HALF`` bytes with the total byte count, in
  bounded memory however much the command prints.
* When the shell exits, output is read until end of file, but at most ``DRAIN_SECONDS``
  longer: a background job (``server &``) that still holds the pipe keeps running, and its
  later output is not waited for.
* The command's environment is the user's without the provider API keys and other secrets
  (:mod:`segue._tools.secrets`), except the names the user passes through (``shell.passEnv``).
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Mapping
from typing import Any, Literal

from segue._tools.base import tool_error
from segue._tools.bounds import HeadTail
from segue._tools.paths import Workspace
from segue._tools.secrets import command_environment

DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 600.0
OUTPUT_HALF = 16 * 1024
DRAIN_SECONDS = 0.5
_READ = 64 * 1024
#: Keep tools that would page or prompt from waiting on a terminal that is not there.
_ENV = {"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"}


def _shell() -> str:
    return shutil.which("bash") or "/bin/sh"


def kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


class BashTool:
    name = "bash"
    read_only = False
    description = (
        "Run a shell command (bash -c) in the workspace directory and return its exit code "
        "and output (stdout and stderr together). stdin is closed. Default timeout "
        f"{int(DEFAULT_TIMEOUT)} s, at most {int(MAX_TIMEOUT)} s; at the timeout the command "
        f"and its children are killed. Output over {2 * OUTPUT_HALF // 1024} KiB keeps its "
        "head and tail. Redirect the output of background jobs to a file."
    )
    schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "command": {"type": "string"},
            "timeout": {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_TIMEOUT},
        },
        "required": ["command"],
        "additionalProperties": False,
    }

    def __init__(self, workspace: Workspace, *, pass_env: tuple[str, ...] = ()) -> None:
        """``pass_env``: secret-looking variables the user lets commands see anyway."""
        self.workspace = workspace
        self.pass_env = pass_env
        self._cancelled: Callable[[], bool] | None = None

    def run(self, args: Mapping[str, Any]) -> Any:
        command = args.get("command")
        if not isinstance(command, str) or not command.strip():
            return tool_error("invalid_argument", "command must be a non-empty string")
        timeout = args.get("timeout", DEFAULT_TIMEOUT)
        if (
            not isinstance(timeout, int | float)
            or isinstance(timeout, bool)
            or not 0 < timeout <= MAX_TIMEOUT
        ):
            return tool_error(
                "invalid_argument", f"timeout must be a number of seconds in (0, {MAX_TIMEOUT:g}]"
            )
        return run_command(
            command,
            cwd=str(self.workspace.root),
            timeout=float(timeout),
            cancelled=self._cancelled,
            pass_env=self.pass_env,
        )

    def run_cancellable(self, args: Mapping[str, Any], cancelled: Callable[[], bool]) -> Any:
        """As :meth:`run`, but a cancelled turn (Ctrl-C) kills the command's process group
        within a tenth of a second: the command runs in its own session, so the terminal's
        interrupt never reaches it on its own."""
        self._cancelled = cancelled
        try:
            return self.run(args)
        finally:
            self._cancelled = None


def run_command(
    command: str,
    *,
    cwd: str,
    timeout: float,
    cancelled: Callable[[], bool] | None = None,
    pass_env: tuple[str, ...] = (),
) -> dict[str, Any]:
    started = time.monotonic()
    deadline = started + timeout
    # Running the model's command is this tool's whole job.
    proc = subprocess.Popen(
        [_shell(), "-c", command],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env={**command_environment(os.environ, pass_env), **_ENV},
    )
    output = HeadTail(OUTPUT_HALF, OUTPUT_HALF)
    timed_out = False
    try:
        stop = _pump(proc, output, deadline, cancelled)
        timed_out = stop is not None
        if not timed_out:
            try:
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                timed_out = True  # it closed its output but kept running
        if timed_out:
            kill_group(proc.pid)
            proc.wait()
    except BaseException:
        # Interrupted (Ctrl-C) or failed while the command runs: never leave it behind.
        kill_group(proc.pid)
        proc.wait()
        raise
    finally:
        if proc.stdout is not None:
            proc.stdout.close()
    result: dict[str, Any] = {
        "ok": not timed_out,
        "exitCode": proc.returncode if proc.returncode >= 0 and not timed_out else None,
        "output": output.text(),
        "outputBytes": output.total,
        "truncated": output.truncated,
        "durationMs": int((time.monotonic() - started) * 1000),
    }
    if timed_out and stop == "cancelled":
        result["error"] = {
            "code": "interrupted",
            "message": "the user interrupted the turn; the command and its child processes "
            "were killed",
        }
    elif timed_out:
        result["error"] = {
            "code": "timeout",
            "message": f"the command did not finish within {timeout:g} s; it and its child "
            "processes were killed",
        }
    elif proc.returncode < 0:
        result["signal"] = signal.Signals(-proc.returncode).name
    return result


def _pump(
    proc: subprocess.Popen[bytes],
    output: HeadTail,
    deadline: float,
    cancelled: Callable[[], bool] | None = None,
) -> Literal["timeout", "cancelled"] | None:
    """Read the command's output until end of file; None when it ended, else why it must be
    stopped (the deadline came first, or the turn was cancelled)."""
    assert proc.stdout is not None  # stdout=PIPE
    fd = proc.stdout.fileno()
    os.set_blocking(fd, False)
    exited_at: float | None = None
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            now = time.monotonic()
            if now >= deadline:
                return "timeout"
            if cancelled is not None and cancelled():
                return "cancelled"
            if exited_at is None and proc.poll() is not None:
                exited_at = now
            if exited_at is not None and now - exited_at >= DRAIN_SECONDS:
                return None  # a background job holds the pipe; do not wait for it
            wait = min(deadline - now, 0.1)
            for _key, _events in selector.select(wait):
                try:
                    chunk = os.read(fd, _READ)
                except BlockingIOError:
                    continue
                if not chunk:
                    return None
                output.feed(chunk)
