"""A real terminal for a child process: a pseudo-terminal from the standard library.

The child is started in a new session and makes the pty its controlling terminal, so the
line discipline does what a terminal does: Ctrl-C (``\\x03``) sends SIGINT to the foreground
process group, Ctrl-D (``\\x04``) at the start of a line is end of input, Enter is ``\\r``.

Waiting is always for output to appear, polled with a deadline; never a fixed sleep.
"""

from __future__ import annotations

import fcntl
import os
import re
import select
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

DEADLINE = 30.0

#: Runs in the child before it becomes the command: take the pty as controlling terminal.
_BOOT = (
    "import fcntl, os, sys, termios; "
    "fcntl.ioctl(0, termios.TIOCSCTTY, 0); "
    "os.execvp(sys.argv[1], sys.argv[1:])"
)
#: Where the kernel shows a process that waits in select()/poll() or a terminal read.
_WAITING_FOR_INPUT = ("poll_schedule_timeout", "do_select", "do_sys_poll", "n_tty_read",
                      "wait_woken")
_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>]|[\x01\x02\r\x07]")


class Terminal:
    def __init__(
        self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], columns: int = 250
    ) -> None:
        master, slave = os.openpty()
        # A wide screen (the default) keeps readline from wrapping (and redrawing) long prompts.
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _BOOT, *argv],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=cwd,
            env=dict(env),
            start_new_session=True,
        )
        os.close(slave)
        self.master = master
        self.raw = b""
        self.pos = 0
        self.eof = False

    @property
    def text(self) -> str:
        """Everything the child printed, without colour and cursor escapes."""
        return _ESCAPES.sub("", self.raw.decode("utf-8", "replace"))

    def pump(self, timeout: float) -> None:
        """Read what the child printed, waiting at most ``timeout`` seconds for it."""
        self._pump(timeout)

    def _pump(self, timeout: float) -> None:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return
        try:
            data = os.read(self.master, 65536)
        except OSError:  # EIO: the child closed its side of the terminal
            data = b""
        if not data:
            self.eof = True
        self.raw += data

    def expect(self, pattern: str, timeout: float = DEADLINE) -> re.Match[str]:
        """Wait until ``pattern`` appears after what earlier expects consumed."""
        compiled = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while True:
            match = compiled.search(self.text, self.pos)
            if match:
                self.pos = match.end()
                return match
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self.eof:
                tail = self.text[self.pos :][-3000:]
                state = "exited" if self.eof else "timed out"
                raise AssertionError(f"{state} waiting for {pattern!r}; output since:\n{tail}")
            self._pump(min(remaining, 0.2))

    def reading(self, timeout: float = DEADLINE) -> None:
        """Wait until the child is blocked waiting for the terminal's input (Linux; elsewhere
        this returns at once).

        Needed before a Ctrl-C at a prompt: readline shows the prompt a moment before it
        waits in select(), and a SIGINT that lands in that moment is only noticed after the
        next line is typed (CPython's readline loop checks signals when select() is
        interrupted). Seeing the prompt is not enough; seeing the process wait is.
        """
        wchan = Path(f"/proc/{self.proc.pid}/wchan")
        deadline = time.monotonic() + timeout
        while True:
            try:
                where = wchan.read_text()
            except OSError:
                return  # no /proc: nothing to wait on
            if any(name in where for name in _WAITING_FOR_INPUT):
                return
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise AssertionError(f"the child never waited for input (it is in {where!r})")
            self._pump(0.01)

    def send(self, data: str) -> None:
        os.write(self.master, data.encode("utf-8"))

    def type(self, line: str) -> None:
        self.send(line + "\r")

    def wait_exit(self, timeout: float = DEADLINE) -> int:
        deadline = time.monotonic() + timeout
        while not self.eof and time.monotonic() < deadline:
            self._pump(min(0.2, max(0.0, deadline - time.monotonic())))
        # The terminal closes (EOF) a moment before the process is gone (interpreter
        # teardown): on a loaded machine that moment can exceed a tenth of a second.
        return self.proc.wait(timeout=max(10.0, deadline - time.monotonic()))

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        os.close(self.master)
