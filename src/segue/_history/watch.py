"""Waiting for a workspace's transcript to change (``segue history follow``).

A :class:`Watch` blocks until the transcript may have changed or a timeout passes; it never
says what changed (the caller reads the store again, which is the only truth). Waking up
for nothing is allowed, sleeping through a change is not — except that every waiter also
wakes at its timeout, so a lost wake-up delays a reader by at most that much.

* PostgreSQL: ``LISTEN`` on the workspace's channel (:mod:`segue.postgres._watch`, the store's own
  ``watch()``), on a connection of
  the watch's own; every append sends ``NOTIFY`` in its own transaction, so the wake-up
  arrives when the batch commits and never before.
* JSONL: inotify on the session directory (through ``ctypes``: Linux's libc, no
  dependency), which sees the chat file grow, a rotation rename it and the receipt change;
  where inotify is unavailable (another OS, no libc, the watch limit reached) the files'
  stamps are polled every :data:`POLL_SECONDS`.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import os
import select
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from segue._history.protocol import TranscriptStore
    from segue._workspace import Layout

#: how often the polling watch looks at the files' stamps
POLL_SECONDS = 0.05

_IN_MODIFY = 0x002
_IN_ATTRIB = 0x004
_IN_CLOSE_WRITE = 0x008
_IN_MOVED_FROM = 0x040
_IN_MOVED_TO = 0x080
_IN_CREATE = 0x100
_IN_DELETE = 0x200
_IN_DELETE_SELF = 0x400
_IN_MOVE_SELF = 0x800
_IN_IGNORED = 0x8000
_MASK = (
    _IN_MODIFY | _IN_ATTRIB | _IN_CLOSE_WRITE | _IN_MOVED_FROM | _IN_MOVED_TO | _IN_CREATE
    | _IN_DELETE | _IN_DELETE_SELF | _IN_MOVE_SELF
)
_IN_NONBLOCK = os.O_NONBLOCK
_IN_CLOEXEC = os.O_CLOEXEC


class Watch(Protocol):
    def wait(self, timeout: float) -> bool:
        """Return True when the transcript may have changed, False after ``timeout``
        seconds without a sign of change."""

    def close(self) -> None: ...


@runtime_checkable
class Watchable(Protocol):
    """A store that can be followed: it opens the watch that suits it."""

    def watch(self) -> Watch: ...


def watch(store: TranscriptStore) -> Watch:
    """The watch ``store`` opens for itself (PostgreSQL's ``LISTEN``, the JSONL store's
    :func:`files_watch`); TypeError for a store that cannot be followed."""
    if not isinstance(store, Watchable):
        raise TypeError(f"cannot watch a {type(store).__name__}")
    return store.watch()


def files_watch(layout: Layout) -> Watch:
    """inotify (else polling) on a JSONL workspace's files."""
    files = (layout.chat, layout.archive, layout.receipt)
    inotify = InotifyWatch.open(layout.session_dir)
    return inotify if inotify is not None else PollWatch(files)


class PollWatch:
    """Looks at the files' stamps every :data:`POLL_SECONDS`."""

    def __init__(self, files: tuple[Path, ...]) -> None:
        self.files = files
        self._last = self._stamps()

    def _stamps(self) -> tuple[tuple[int, ...] | None, ...]:
        out: list[tuple[int, ...] | None] = []
        for path in self.files:
            try:
                st = os.stat(path)
            except OSError:
                out.append(None)
                continue
            out.append((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
        return tuple(out)

    def wait(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while True:
            now = self._stamps()
            if now != self._last:
                self._last = now
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(POLL_SECONDS, left))

    def close(self) -> None:
        pass


class InotifyWatch:
    """inotify on the session directory; until the directory exists (a workspace with no
    history yet), it polls for it and adds the watch once it appears."""

    def __init__(self, libc: Any, fd: int, directory: Path) -> None:
        self._libc = libc
        self._fd = fd
        self.directory = directory
        self._watching = False
        self._add()

    @classmethod
    def open(cls, directory: Path) -> InotifyWatch | None:
        """The watch, or None where inotify is not available."""
        name = ctypes.util.find_library("c")
        if name is None:
            return None
        try:
            libc = ctypes.CDLL(name, use_errno=True)
            init = libc.inotify_init1
        except (OSError, AttributeError):
            return None
        init.argtypes = [ctypes.c_int]
        init.restype = ctypes.c_int
        libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        libc.inotify_add_watch.restype = ctypes.c_int
        fd = int(init(_IN_NONBLOCK | _IN_CLOEXEC))
        if fd < 0:
            return None
        watch = cls(libc, fd, directory)
        if not watch._watching and not _missing(directory):
            watch.close()  # the directory is there but cannot be watched (a watch limit)
            return None
        return watch

    def _add(self) -> None:
        wd = int(self._libc.inotify_add_watch(self._fd, os.fsencode(self.directory), _MASK))
        self._watching = wd >= 0

    def wait(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not self._watching:
            self._add()
            if self._watching:
                return True  # it appeared: whatever made it may have written rows already
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(POLL_SECONDS, left))
        ready, _, _ = select.select([self._fd], [], [], max(0.0, deadline - time.monotonic()))
        if ready:
            self._drain()
        return bool(ready)

    def _drain(self) -> None:
        while True:
            try:
                data = os.read(self._fd, 65536)
            except BlockingIOError:
                return
            except OSError as exc:
                if exc.errno == errno.EINTR:
                    continue
                raise
            if not data:
                return
            if _ignored(data):
                self._watching = False  # the directory went away: watch for it again
                return

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._fd)


def _missing(directory: Path) -> bool:
    return not os.path.isdir(directory)


def _ignored(data: bytes) -> bool:
    """Whether an event in ``data`` (struct inotify_event records) says the watch ended."""
    at = 0
    while at + 16 <= len(data):
        mask = int.from_bytes(data[at + 4 : at + 8], "little")
        length = int.from_bytes(data[at + 12 : at + 16], "little")
        if mask & (_IN_IGNORED | _IN_DELETE_SELF | _IN_MOVE_SELF):
            return True
        at += 16 + length
    return False


__all__ = ["POLL_SECONDS", "InotifyWatch", "PollWatch", "Watch", "watch"]
