"""A ``segue history follow`` process for the tests: its output read on a thread, polled for
(never slept on), and ended with Ctrl-C (SIGINT) as a user would."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.front import write_rows

ROOT = Path(__file__).resolve().parents[2]
#: how long a test waits for output that must come (a generous bound on a loaded machine;
#: SPEC's 200 ms is measured in bench/, never asserted)
PATIENCE = 60.0


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT / "src")}


def segue(home: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "segue", "--home", str(home), *args],
        capture_output=True, env=env(), timeout=120, check=False,
    )


def ok(result: subprocess.CompletedProcess[bytes]) -> bytes:
    assert result.returncode == 0, result.stderr.decode()
    return result.stdout


def row(ident: str, text: str, *, seq: int = 0, **metadata: Any) -> dict[str, Any]:
    return {
        "id": ident,
        "role": "user",
        "metadata": {"timestamp": 1700000000000 + seq, "historySequence": seq, **metadata},
        "parts": [{"type": "text", "text": text}],
    }


def reset_row(ident: str) -> dict[str, Any]:
    return {"id": ident, "role": "user", "parts": [],
            "metadata": {"contextBoundaryKind": "reset", "historySequence": 0}}


def batch_file(path: Path, rows: list[dict[str, Any]]) -> Path:
    return write_rows(path, rows)


class Follower:
    def __init__(self, home: Path, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "segue", "--home", str(home), *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env(),
        )
        self._out = bytearray()
        self._err = bytearray()
        self._lock = threading.Lock()
        self._threads = [
            threading.Thread(target=self._pump, args=(stream, buf), daemon=True)
            for stream, buf in ((self.proc.stdout, self._out), (self.proc.stderr, self._err))
        ]
        for thread in self._threads:
            thread.start()

    def _pump(self, stream: Any, buf: bytearray) -> None:
        for chunk in iter(lambda: stream.read1(65536), b""):
            with self._lock:
                buf.extend(chunk)

    @property
    def out(self) -> str:
        with self._lock:
            return self._out.decode()

    @property
    def err(self) -> str:
        with self._lock:
            return self._err.decode()

    def wait_for(self, check: Callable[[str], bool], what: str, *, err: bool = False) -> str:
        deadline = time.monotonic() + PATIENCE
        while time.monotonic() < deadline:
            text = self.err if err else self.out
            if check(text):
                return text
            if self.proc.poll() is not None:
                time.sleep(0.05)  # let the reader threads take the last output
                if check(self.err if err else self.out):
                    return self.err if err else self.out
                raise AssertionError(f"follow ended ({self.proc.returncode}): {self.err}")
            time.sleep(0.01)
        raise AssertionError(f"no {what} within {PATIENCE} s; output so far: {self.out!r}")

    def wait_ready(self) -> None:
        """Poll until the follower says it is following (its watch is open and it has read
        where the transcript ends: every batch appended from now on is printed)."""
        self.wait_for(lambda e: "following workspace" in e, "readiness line", err=True)

    def interrupt(self) -> int:
        self.proc.send_signal(signal.SIGINT)
        try:
            return self.proc.wait(timeout=PATIENCE)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for thread in self._threads:
            thread.join(timeout=PATIENCE)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


def lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line]
