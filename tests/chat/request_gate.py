"""A scripted provider step held until the test lets it through, for the chat and the
full-screen chat tests: the scripted provider logs each request to its ``requestLog``; when
that is a FIFO, opening it for writing waits for a reader, so the step is in flight, like a
slow provider call, exactly as long as the test decides."""

from __future__ import annotations

import os
import threading
from pathlib import Path


class RequestGate:
    """Holds each scripted provider step until let through: the script's ``requestLog`` is a
    FIFO, and a step that opens it for writing waits for this reader (a slow provider call,
    made deterministic)."""

    def __init__(self, path: Path) -> None:
        os.mkfifo(path)
        self.path = path
        self.passed = 0
        self._permits = threading.Semaphore(0)
        self._free = threading.Event()
        self._passed_one = threading.Condition()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            if not self._free.is_set():
                self._permits.acquire()
            # Blocks until a step opens the FIFO to log its request; reads that request.
            with self.path.open("rb") as fifo:
                fifo.read()
            with self._passed_one:
                self.passed += 1
                self._passed_one.notify_all()

    def allow_one(self) -> None:
        self._permits.release()

    def wait_passed(self, count: int, timeout: float = 30.0) -> None:
        with self._passed_one:
            assert self._passed_one.wait_for(lambda: self.passed >= count, timeout)

    def open_wide(self) -> None:
        self._free.set()
        self._permits.release()
