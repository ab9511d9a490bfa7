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
* A timeout raises :class:`segue._errors.LockTimeout` naming the lock path.
* Writers take the lock exclusively, creating the file (and its directory) when missing; a
  lock that cannot be opened for writing (another user's, a read-only home, not a regular
  file) is a :class:`segue._errors.FileError` naming the path and the missing access.
* Readers (``shared=True``) take a shared ``flock`` on the existing file opened read-only
  (``flock`` works on an ``O_RDONLY`` descriptor): they never create the file or its
  directory, so reading works on a read-only home. When the lock file is missing or cannot
  be opened, they read without it, say so once per lock path on stderr, and rely on the
  receipt and stamp checks every reader makes anyway (R30). Nested holds in one process
  reuse the outer hold whatever their mode (a writer never nests inside a reader).

Why not ``filelock.FileLock`` itself: it reopens and re-checks the file on every acquire,
about 0.25 ms, which alone was as much as the whole fsync'd append it guards.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from segue._errors import FileError, LockTimeout
from segue._fsutil import file_error, kind_of

_POLL = 0.002


def _stderr_note(text: str) -> None:
    sys.stderr.write(f"segue: note: {text}\n")
    sys.stderr.flush()


#: Where a reader says that it reads without the lock (once per lock path and process).
unlocked_read_note: Callable[[str], None] = _stderr_note
_noted: set[Path] = set()


def _note_unlocked(path: Path, reason: str) -> None:
    if path in _noted:
        return
    _noted.add(path)
    unlocked_read_note(
        f"could not take the lock {path} ({reason}); reading without it, "
        "checking the receipt and file stamps instead"
    )


class _PathLock:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.thread_lock = threading.RLock()
        self.fd = -1
        self.pid = -1
        self.depth = 0
        self.unlocked = False  # the current (reader's) hold runs without the lock
        self.shared = False  # the current hold is a reader's

    def _reset_after_fork(self) -> None:
        if self.pid != os.getpid():
            self.fd = -1  # the parent's descriptor is left alone: its lock is the parent's
            self.pid = os.getpid()
            self.depth = 0

    def _open(self, flags: int) -> int:
        fd = os.open(self.path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o600)
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            os.close(fd)
            raise FileError(
                f"lock {self.path} is {kind_of(st.st_mode)}, not a regular file", path=self.path
            )
        return fd

    def _writer_descriptor(self) -> int:
        self._reset_after_fork()
        if self.fd < 0:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise file_error(exc, self.path.parent, "create the lock directory") from None
            try:
                self.fd = self._open(os.O_RDWR | os.O_CREAT)
            except OSError as exc:
                raise file_error(exc, self.path, "open the lock for writing") from None
        return self.fd

    def _reader_descriptor(self) -> int | None:
        self._reset_after_fork()
        if self.fd < 0:
            try:
                self.fd = self._open(os.O_RDONLY)
            except FileNotFoundError:
                _note_unlocked(self.path, "it does not exist and a reader does not create it")
                return None
            except FileError as exc:
                _note_unlocked(self.path, exc.message)
                return None
            except OSError as exc:
                _note_unlocked(self.path, exc.strerror or str(exc))
                return None
        return self.fd

    def acquire(self, deadline: float, timeout: float, *, shared: bool) -> None:
        if self.depth > 0 and self.pid == os.getpid():
            if self.shared and not shared:
                # a shared flock (or none at all) cannot be upgraded without a window in
                # which another writer gets in: a writer must take the lock first
                raise RuntimeError(f"a writer cannot nest inside a reader's hold of {self.path}")
            self.depth += 1
            return
        self.shared = shared
        if shared:
            reader_fd = self._reader_descriptor()
            if reader_fd is None:
                self.unlocked = True
                self.depth = 1
                return
            fd = reader_fd
        else:
            fd = self._writer_descriptor()
        self.unlocked = False
        op = fcntl.LOCK_SH if shared else fcntl.LOCK_EX
        while True:
            try:
                fcntl.flock(fd, op | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    raise file_error(exc, self.path, "lock") from None
            if time.monotonic() >= deadline:
                raise LockTimeout(self.path, timeout)
            time.sleep(_POLL)
        self.depth = 1

    def release(self) -> None:
        self.depth -= 1
        if self.depth == 0:
            if self.unlocked:
                self.unlocked = False
                return
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
def hold(path: Path, timeout: float, *, shared: bool = False) -> Iterator[None]:
    """Hold the lock at ``path``: exclusively (created with its directory when missing), or
    ``shared`` for a reader (never created; without it when it cannot be opened)."""
    entry = _entry(path)
    deadline = time.monotonic() + timeout
    if not entry.thread_lock.acquire(timeout=max(timeout, 0.0)):
        raise LockTimeout(path, timeout)
    try:
        entry.acquire(deadline, timeout, shared=shared)
        try:
            yield
        finally:
            entry.release()
    finally:
        entry.thread_lock.release()
