"""Rebuilding the history index between look-back calls, in a process that lives on (SPEC.md
§6: "back on the index within 3 calls; no call over 1 s"; §7 "Freshness"). I/O.

A look-back call that finds the index untrusted answers from the bounded scan and then, in
a process that lives on (a session's ``session_history``, ``segue mcp serve``, a library
user's tool made with ``background=True``), calls :func:`ensure`: it starts one builder
process per index file per process (:mod:`~segue._retrieval.index_child`), lazily, on that
first untrusted call, so neither ``segue``'s start nor a one-shot command pays for it; a lost
index (its file missing) of a transcript of 2 MiB or more has it started as the tool is made
(``backends.sqlite_index``), so the model's steps before its first look-back index. A child
that ended on a failure that lasts (a Xum stream in progress, a receipt that does not vouch,
a file it cannot write) is not started again, and no call waits for one, until the receipt
epoch, the stamps or the stream change, or :data:`RETRY_SECONDS` pass (a full disk freed,
say: ``Builder.failing``). The child rebuilds a transcript of at most :data:`WHOLE_BYTES`
whole, with the rebuild's worker on the other core (``kill -9`` loses that build), and a
longer one, or a side file where steps already committed, by bounded steps back to back in
one process, each its own transaction under the side file's ``flock`` (index_steps.py), so
``kill -9`` of either process loses at most the step in progress. Two processes never build
at once: a child that finds the side file locked by another process ends, and the next
untrusted call starts one again.

Why a process and not a thread: measured on 5 MB of realistic rows with calls back to back,
a thread got 0.18 s of CPU in 4 s (each SQLite call of a step releases the interpreter lock,
and getting it back waited for the calling thread's 5 ms switch interval, thousands of times
a step); the child has its own lock and the machine's other core.

A reader thread per child reads its progress lines (``step POS SIZE``, ``end OUTCOME``) and
reaps it when it ends, so no zombie is left. A call that finds the builder running lets it
work for what the call's time allows (:func:`wait`, until :data:`WAIT_SECONDS` after the
call began; SPEC.md §6: no call over 1 s) and answers from the index if it is in place by
then, else from the scan: a look-back's calls that come back to back so give the builder
the time a model's step between calls would, and the agent makes fewer calls.
The child dies with its parent: it reads a pipe only the parent holds and stops at its end
(at most :data:`~segue._retrieval.index_child.EXIT_SECONDS` later). :func:`stop` (also at
interpreter exit) closes that pipe, waits up to :data:`EXIT_SECONDS` for the step in
progress to commit, then kills the child. ``SEGUE_INDEX_BUILDER=off`` turns the builder off
everywhere; calls then run one step each, as a one-shot command does.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from segue._errors import FileError
from segue._fsutil import describe_os_error
from segue._workspace import Layout

#: transcript bytes one step of the child indexes (~0.3 s on realistic rows; ``kill -9``
#: loses at most this much work, and a stop waits at most one step)
STEP_BYTES = 4 << 20
#: the largest transcript the child rebuilds whole, in one transaction into the side file
#: with the rebuild's worker on the other core (about twice the steps' rate), unless steps
#: committed in the side file already (they go on instead); ``kill -9`` of the child then
#: loses the whole build, at most about 20 s of work at this size; a longer transcript is
#: built by steps
WHOLE_BYTES = 256 << 20
#: at :func:`stop` (and interpreter exit), how long to wait for the step in progress to
#: commit before the child is killed (safe: a killed step is rolled back by the next)
EXIT_SECONDS = 1.0
#: how long after it began a call may wait for a running builder (SPEC.md §6: no call over
#: 1 s; the rest is the call's own page)
WAIT_SECONDS = 0.6
#: how long a failure that lasts keeps a builder from starting again while the files stay
#: as they were (one child a minute at most: its start costs about 0.1 s of CPU)
RETRY_SECONDS = 60.0
#: the setting that turns the builder off (``off``, ``0``, ``no``, ``false``)
ENV = "SEGUE_INDEX_BUILDER"


def enabled() -> bool:
    """Whether the environment allows the background builder."""
    return os.environ.get(ENV, "").strip().lower() not in {"off", "0", "no", "false"}


@dataclasses.dataclass
class Builder:
    """The background rebuild of one index file: its child process and how it went."""

    layout: Layout
    proc: subprocess.Popen[bytes] | None = None
    reader: threading.Thread | None = None
    #: steps the current child committed so far (the last, putting the index in place, too)
    steps: int = 0
    #: why the last child ended: "built", or the reason it could not go on (set once the
    #: child is reaped; ``said`` as soon as the child says it, before it exits)
    outcome: str | None = None
    said: str | None = None
    #: transcript bytes the side file holds after the latest step, of the transcript's size
    pos: int = 0
    size: int = 0
    changed: threading.Condition = dataclasses.field(default_factory=threading.Condition)
    #: what the files looked like when the current child started (:func:`_state`), and, when
    #: that child ended on a failure that lasts until they change, that same state: no child
    #: is started again (and no call waits for one) while the files still look like that
    started_on: object = None
    failed_on: object = None
    failed_at: float = 0.0  # time.monotonic() when that child failed

    def failing(self, now: object) -> bool:
        """The last child failed in a way that lasts, nothing changed since it started, and
        that was less than :data:`RETRY_SECONDS` ago (some causes pass without a file
        changing: a full disk freed, an I/O error)."""
        return (
            self.failed_on is not None
            and self.failed_on == now
            and time.monotonic() - self.failed_at < RETRY_SECONDS
        )

    def running(self) -> bool:
        """A child started and not reaped yet."""
        return self.reader is not None and self.outcome is None

    def pid(self) -> int | None:
        return None if self.proc is None else self.proc.pid

    def progress(self) -> str:
        """How far the current child has got, for a person ("" before its first step)."""
        if self.size <= 0 or self.pos <= 0:
            return ""
        return f" ({self.pos / 1e6:.1f} of {self.size / 1e6:.1f} MB indexed)"

    def _read(self, proc: subprocess.Popen[bytes]) -> None:
        """Progress lines until the child's stdout ends; then reap it."""
        assert proc.stdout is not None
        outcome: str | None = None
        for raw in proc.stdout:
            kind, _, rest = raw.decode("utf-8", "replace").strip().partition(" ")
            with self.changed:
                if kind == "step":
                    self._progress(rest)
                elif kind in ("end", "fail"):
                    self.said = outcome = rest
                    self.steps += rest == "built"
                    if kind == "fail":
                        self.failed_on, self.failed_at = self.started_on, time.monotonic()
                self.changed.notify_all()
        proc.stdout.close()
        code = proc.wait()
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        with self.changed:
            if outcome is None:
                outcome = f"the builder process ended (exit status {code})"
            self.outcome = outcome
            self.changed.notify_all()

    def _progress(self, rest: str) -> None:
        self.steps += 1
        with contextlib.suppress(ValueError):
            pos, size = (int(n) for n in rest.split())
            self.pos, self.size = max(pos, 0), size


def _command(layout: Layout, step_bytes: int) -> list[str]:
    """The child's command line (this interpreter, this copy of segue)."""
    return [
        sys.executable,
        "-m",
        "segue._retrieval.index_child",
        str(layout.home),
        layout.workspace_id,
        str(step_bytes),
        str(WHOLE_BYTES),
    ]


def _env() -> dict[str, str]:
    """This process's environment, with this copy of segue first on the path."""
    here = str(Path(__file__).resolve().parents[2])
    rest = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": here if not rest else os.pathsep.join([here, rest])}


def _state(layout: Layout) -> object:
    """What decides whether a build can succeed: the receipt epoch and both files' stamps
    (the snapshot), and whether a Xum stream is in progress (not when its ``partial.json``
    was last written: it changes all through a stream)."""
    from segue._retrieval.index_file import stream_in_progress
    from segue._retrieval.snapshot import take

    try:
        snap: object = take(layout)
    except OSError as exc:
        snap = describe_os_error(exc)
    except FileError as exc:  # a symbolic link, a FIFO, ... where the transcript belongs
        snap = str(exc)
    return (snap, stream_in_progress(layout))


def _start(builder: Builder, state: object) -> None:
    builder.started_on, builder.failed_on = state, None
    proc = subprocess.Popen(
        _command(builder.layout, STEP_BYTES),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=_env(),
        start_new_session=True,  # a Ctrl-C at the terminal is the session's, not the child's
    )
    builder.proc = proc
    builder.steps, builder.outcome, builder.said, builder.pos, builder.size = 0, None, None, 0, 0
    builder.reader = threading.Thread(
        target=builder._read, args=(proc,), name=f"segue-index-builder:{proc.pid}", daemon=True
    )
    builder.reader.start()


_LOCK = threading.Lock()
_BUILDERS: dict[str, Builder] = {}


def _key(layout: Layout) -> str:
    from segue._retrieval.index_file import index_path

    return os.path.realpath(index_path(layout))


def ensure(layout: Layout) -> Builder:
    """Start the background rebuild of ``layout``'s index unless it is already running for
    this process, or the last one failed in a way that lasts (a Xum stream in progress, a
    receipt that does not vouch for the files, a file that cannot be written) and the files
    are as they were when it started (``failing``); never waits for it. A child that cannot
    be started leaves the reason in ``outcome`` (and the builder not running)."""
    with _LOCK:
        key = _key(layout)
        builder = _BUILDERS.get(key)
        if builder is None:
            builder = _BUILDERS[key] = Builder(layout)
        if not builder.running():
            state = _state(layout)
            if builder.failing(state):
                return builder
            try:
                _start(builder, state)
            except OSError as exc:
                builder.proc, builder.reader = None, None
                builder.outcome = f"the builder could not start: {describe_os_error(exc)}"
        return builder


def builder_for(layout: Layout) -> Builder | None:
    """This process's builder of ``layout``'s index (None: none was ever started)."""
    with _LOCK:
        return _BUILDERS.get(_key(layout))


def wait(layout: Layout, until: float) -> bool:
    """Wait, at most until the monotonic time ``until``, for this process's builder of
    ``layout``'s index to end (to say how it ended); whether it did, or none runs."""
    builder = builder_for(layout)
    if builder is None:
        return True
    with builder.changed:
        while builder.running() and builder.said is None:
            left = until - time.monotonic()
            if left <= 0:
                return False
            builder.changed.wait(left)
    return True


def join(layout: Layout, timeout: float) -> bool:
    """Wait up to ``timeout`` seconds for the builder of ``layout``'s index to end; whether
    none is running now."""
    builder = builder_for(layout)
    reader = None if builder is None else builder.reader
    if reader is not None:
        reader.join(timeout)
        return not reader.is_alive()
    return True


def stop(layout: Layout | None = None, timeout: float = EXIT_SECONDS) -> bool:
    """End the builder of ``layout``'s index (None: every builder): its pipe is closed, the
    step in progress gets up to ``timeout`` seconds to commit, then the child is killed;
    whether all ended (and were reaped)."""
    with _LOCK:
        chosen = list(_BUILDERS.values()) if layout is None else [_BUILDERS.get(_key(layout))]
    ended = True
    for builder in chosen:
        if builder is None or builder.proc is None or builder.reader is None:
            continue
        proc, reader = builder.proc, builder.reader
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        reader.join(timeout)
        if reader.is_alive():
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            reader.join(timeout)
        ended = ended and not reader.is_alive()
    return ended


atexit.register(stop)
