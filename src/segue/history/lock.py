"""The cross-process transcript lock (R28, R30).

One lock file per workspace at ``Layout.lock``, locked with ``flock`` (the mechanism
``filelock.FileLock`` uses on Unix, so a ``FileLock`` on the same path excludes us and we it).
Invariants:

* The lock file is never unlinked: unlinking a locked file on Unix splits waiters across two
  inodes, and two writers would then both believe they hold the lock.
* Re-entrant within a process: one descriptor per lock path and process (an ``flock`` taken
  through two descriptors of one process would block itself), a depth count, and a
  per-path ``threading.RLock`` that keeps threads apart (``flock`` does not).
* A child process never inherits a held lock: the descriptor is reopened after a fork, since
  ``flock`` locks belong to the open file description, which a fork shares.
* A timeout raises :class:`segue.errors.LockTimeout` naming the lock path.

Why not ``filelock.FileLock`` itself: it reopens and re-checks the file on every acquire,
about 0.25 ms, which alone was as much as the whole fsync'd append it guards.
"""

from __future__ import annotations

import errno
import fcntl
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from segue.errors import LockTimeout

_POLL = 0.002


class _PathLock:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.thread_lock = threading.RLock()
        self.fd = -1
        self.pid = -1
        self.depth = 0

    def _descriptor(self) -> int:
        if self.fd < 0 or self.pid != os.getpid():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            self.pid = os.getpid()
            self.depth = 0
        return self.fd

    def acquire(self, deadline: float, timeout: float) -> None:
        if self.depth > 0 and self.pid == os.getpid():
            self.depth += 1
            return
        fd = self._descriptor()
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    raise
            if time.monotonic() >= deadline:
                raise LockTimeout(self.path, timeout)
            time.sleep(_POLL)
        self.depth = 1

    def release(self) -> None:
        self.depth -= 1
        if self.depth == 0:
            fcntl.flock(self.fd, fcntl.LOCK_UN)


_registry_guard = threading.Lock()
_registry: dict[Path, _PathLock] = {}


def _entry(path: Path) -> _PathLock:
    key = path.absolute()
    with _registry_guard:
        entry = _registry.get(key)
        if entry is None:
            entry = _registry[key] = _PathLock(key)
        return entry


@contextmanager
def hold(path: Path, timeout: float) -> Iterator[None]:
    """Hold the lock at ``path`` (created with its directory when missing)."""
    entry = _entry(path)
    deadline = time.monotonic() + timeout
    if not entry.thread_lock.acquire(timeout=max(timeout, 0.0)):
        raise LockTimeout(path, timeout)
    try:
        entry.acquire(deadline, timeout)
        try:
            yield
        finally:
            entry.release()
    finally:
        entry.thread_lock.release()
