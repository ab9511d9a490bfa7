"""A rebuild's second core: a forked process that makes batches of rows while the one that
forked it makes the others and writes them all into SQLite (SPEC.md §6, the rebuild rate;
which batches each makes: :mod:`segue._retrieval.index_build_split`). I/O.

Reading, classifying and projecting the rows and their words analysis are Python; the
inserts are mostly SQLite's own C. Split between two processes, a rebuild runs at about the
pace of the slower one instead of the sum of both.

* The worker is :func:`os.fork`'d: it starts with the writer's state (modules, caches) and
  nothing to import. It reads the transcript by itself, sends each batch as a pickle down a
  pipe, then an end mark; an exception it meets is sent and raised again in the writer, so
  a rewritten transcript (``HistoryMoved``) means what it means in-process.
* It never opens, writes or locks anything: the index file, its ``flock`` (closed in the
  worker) and the decision to put it in place stay with the writer, so what a crash leaves
  behind is exactly what an in-process rebuild leaves. ``kill -9`` of the writer: the
  worker's next write finds the pipe closed and it exits. ``kill -9`` of the worker: the
  writer reads the end of the pipe before the end mark and raises :class:`WorkerLost`
  (the rebuild fails; the next look-back builds by steps).
* The writer reads the pipe ahead on a thread (:class:`_Drain`, up to :data:`AHEAD_BYTES`
  of batches not yet unpickled): a pipe holds at most 1 MiB, so without it the worker
  waited whenever the writer was inserting and the writer whenever the worker was
  analysing, the two running in turn instead of side by side. The thread only moves bytes
  (``os.read`` lets go of the GIL while it waits); it is started after the fork and joined
  before the worker is done with, so the next rebuild's fork still finds one thread.
* Used only where it is safe and pays: :func:`wanted` (``fork`` exists, this process runs
  no other thread, two CPUs of which about one is idle by the load average (less this
  process's own part, :data:`OWN_LOAD`), and a transcript
  of at least :data:`MIN_BYTES`; the setting ``SEGUE_INDEX_WORKER=off`` never, ``on``
  whatever the size, the CPUs and the load).
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import os
import pickle
import signal
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from threading import Condition, Thread
from types import TracebackType
from typing import Any, BinaryIO, Generic, TypeVar

__all__ = ["BATCH", "MIN_BYTES", "Worker", "WorkerLost", "wanted"]

#: rows per batch the worker sends (smaller than an in-process batch: the writer starts
#: sooner and the pipe holds less)
BATCH = 250
#: the smallest transcript a rebuild forks a worker for (below it the fork is not worth it)
MIN_BYTES = 2 << 20
#: this process's own part of the load average when it asks (the background builder's child
#: sets 1: it is itself the busy process the average counts, index_child.py)
OWN_LOAD = 0.0
#: the most the writer holds read from the pipe and not yet unpickled (the worker waits
#: beyond it)
AHEAD_BYTES = 64 << 20
_PIPE_BYTES = 1 << 20
_ROWS, _DONE, _ERROR = 0, 1, 2

T = TypeVar("T")


class WorkerLost(Exception):
    """The worker ended before it sent everything (killed, or out of memory)."""


def wanted(total: int) -> bool:
    """Whether a rebuild of ``total`` transcript bytes should fork a worker
    (``SEGUE_INDEX_WORKER``: ``off`` never, ``on`` whatever the size, the CPUs and the
    load)."""
    setting = os.environ.get("SEGUE_INDEX_WORKER", "").strip().lower()
    # a fork copies only the calling thread: with others running, a lock one of them held
    # would stay held in the worker for ever
    if setting == "off" or not hasattr(os, "fork") or threading.active_count() != 1:
        return False
    if setting == "on":
        return True
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    if cpus < 2 or total < MIN_BYTES:
        return False
    # a second core that is busy anyway: the split's extra work (both processes read and
    # follow every line, the batches are pickled) only slows a saturated machine down
    try:
        load = os.getloadavg()[0]
    except OSError:
        return True
    return load - OWN_LOAD <= cpus - 1


class _Drain(io.RawIOBase):
    """The read end of the worker's pipe, read ahead by a thread into memory (at most
    ``ahead`` bytes held), so that the worker never waits on a full pipe while this process
    is busy inserting. Read through an :class:`io.BufferedReader`; closing it ends the
    thread (the worker must be gone or finishing: the thread may be waiting in ``os.read``)
    and closes the descriptor."""

    def __init__(self, fd: int, ahead: int) -> None:
        super().__init__()
        self._fd, self._ahead = fd, ahead
        self._chunks: deque[memoryview] = deque()
        self._held = 0
        self._ended = False  # the thread read the end of the pipe, or failed
        self._error: OSError | None = None
        self._stopping = False
        self._cond = Condition()
        self._thread = Thread(target=self._fill, name="segue-index-drain", daemon=True)
        self._thread.start()

    def _fill(self) -> None:
        while True:
            with self._cond:
                while self._held >= self._ahead and not self._stopping:
                    self._cond.wait()
                if self._stopping:
                    return
            error: OSError | None = None
            try:
                chunk = os.read(self._fd, _PIPE_BYTES)
            except OSError as exc:
                chunk, error = b"", exc
            with self._cond:
                if chunk:
                    self._chunks.append(memoryview(chunk))
                    self._held += len(chunk)
                else:
                    self._ended, self._error = True, error
                self._cond.notify_all()
            if not chunk:
                return

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        with self._cond:
            while not self._chunks and not self._ended:
                self._cond.wait()
            if not self._chunks:
                if self._error is not None:
                    raise self._error
                return 0  # the end of the pipe
            chunk = self._chunks[0]
            size = min(len(view), len(chunk))
            view[:size] = chunk[:size]
            if size == len(chunk):
                self._chunks.popleft()
            else:
                self._chunks[0] = chunk[size:]
            self._held -= size
            self._cond.notify_all()
            return size

    def close(self) -> None:
        if self.closed:
            return
        with self._cond:
            self._stopping = True
            self._chunks.clear()
            self._held = 0
            self._cond.notify_all()
        self._thread.join()
        with contextlib.suppress(OSError):
            os.close(self._fd)
        super().close()


class Worker(Generic[T]):
    """``with Worker(produce) as w``: ``w.batches()`` yields what ``produce()`` yields in
    the worker. ``close``: a file descriptor the worker closes first (the writer's lock)."""

    def __init__(self, produce: Callable[[], Iterable[T]], *, close: int | None = None) -> None:
        self._produce, self._close = produce, close
        self._pid = 0
        self._pipe: BinaryIO | None = None
        self._done = False

    def __enter__(self) -> Worker[T]:
        read, write = os.pipe()
        with contextlib.suppress(OSError, AttributeError):  # Linux: fewer wake-ups
            fcntl.fcntl(write, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
        pid = os.fork()
        if pid == 0:  # the worker: never returns
            os.close(read)
            self._run(write)
        os.close(write)
        self._pid = pid
        self._pipe = io.BufferedReader(_Drain(read, AHEAD_BYTES), buffer_size=_PIPE_BYTES)
        return self

    def _run(self, fd: int) -> None:
        code = 0
        try:
            if self._close is not None:
                with contextlib.suppress(OSError):
                    os.close(self._close)
            with os.fdopen(fd, "wb", buffering=_PIPE_BYTES) as out:
                try:
                    for item in self._produce():
                        pickle.dump((_ROWS, item), out, protocol=pickle.HIGHEST_PROTOCOL)
                        out.flush()
                    final: tuple[int, Any] = (_DONE, None)
                except BaseException as exc:  # noqa: BLE001 (sent to the writer, raised there)
                    final = (_ERROR, exc)
                try:
                    pickle.dump(final, out, protocol=pickle.HIGHEST_PROTOCOL)
                except Exception:  # noqa: BLE001 (an exception that does not pickle)
                    pickle.dump((_ERROR, RuntimeError(repr(final[1]))), out)
        except BaseException:  # noqa: BLE001 (the writer is gone: nothing to tell)
            code = 1
        finally:
            os._exit(code)  # no atexit handlers, no finalizers of the writer's objects

    def batches(self) -> Iterator[T]:
        """The worker's items, until its end; an exception it met is raised here."""
        pipe = self._pipe
        assert pipe is not None, "batches() outside the with block"
        while True:
            try:
                kind, value = pickle.load(pipe)  # noqa: S301 (our own fork's pipe)
            except (EOFError, pickle.UnpicklingError, OSError) as exc:
                raise WorkerLost(f"the rebuild's worker process stopped early ({exc!r})") from None
            if kind == _ROWS:
                yield value
            elif kind == _DONE:
                self._done = True
                return
            else:
                raise value

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._pid:
            if exc is not None or not self._done:  # its batches are no longer wanted
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self._pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self._pid, 0)
        if self._pipe is not None:  # the worker is gone: the read-ahead meets the pipe's end
            self._pipe.close()
