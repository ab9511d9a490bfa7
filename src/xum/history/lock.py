"""The cross-process transcript lock (R28, R30).

One lock file per workspace at ``Layout.lock``. Invariants:

* The lock file is never unlinked: unlinking a locked file on Unix splits waiters across two
  inodes, and two writers would then both believe they hold the lock.
* Re-entrant within a process: every :class:`HistoryStore` for the same lock path shares one
  :class:`filelock.FileLock` (an ``flock`` taken twice through two descriptors of one process
  would block itself), and a per-path ``threading.RLock`` keeps threads of one process out of
  each other's way, because ``flock`` alone does not separate threads sharing a descriptor.
* A timeout raises :class:`xum.errors.LockTimeout` naming the lock path.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import filelock

from xum.errors import LockTimeout

_registry_guard = threading.Lock()
_registry: dict[Path, tuple[filelock.FileLock, threading.RLock]] = {}


def _entry(path: Path) -> tuple[filelock.FileLock, threading.RLock]:
    key = path.absolute()
    with _registry_guard:
        entry = _registry.get(key)
        if entry is None:
            # thread_local=False: the in-process RLock already serializes threads, and the
            # re-entrance count must be visible to the thread that holds the RLock.
            entry = (filelock.FileLock(str(key), thread_local=False), threading.RLock())
            _registry[key] = entry
        return entry


@contextmanager
def hold(path: Path, timeout: float) -> Iterator[None]:
    """Hold the lock at ``path`` (created with its directory when missing)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    file_lock, thread_lock = _entry(path)
    deadline = time.monotonic() + timeout
    if not thread_lock.acquire(timeout=max(timeout, 0.0)):
        raise LockTimeout(path, timeout)
    try:
        try:
            file_lock.acquire(timeout=max(deadline - time.monotonic(), 0.0))
        except filelock.Timeout:
            raise LockTimeout(path, timeout) from None
        try:
            yield
        finally:
            file_lock.release()
    finally:
        thread_lock.release()
