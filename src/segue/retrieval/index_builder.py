"""Rebuilding the history index between look-back calls, in a long-lived process (SPEC.md §6:
"back on the index within 3 calls; no call over 1 s"; §7 "Freshness"). I/O and a thread.

A look-back call that finds the index untrusted answers from the bounded scan and then, in
a process that lives on (a session's ``session_history``, ``segue mcp serve``, a library
user's tool made with ``background=True``), calls :func:`ensure`: one daemon thread per
index file per process runs :func:`~segue.retrieval.index_steps.build_step` back to back
until a step puts the index in place, then ends. Every step is still its own transaction
under the side file's ``flock`` (index_steps.py), so ``kill -9`` loses at most the step in
progress and two processes never step at once: a step that finds the side file locked by
another process ends the thread, and the next untrusted call starts it again. Calls that
arrive meanwhile never wait for it: they answer from the scan and switch to the index as
soon as it is trusted (cursors move onto it, index_resume.py).

The thread stops early when asked (:func:`stop`, and at interpreter exit, where each thread
is joined for at most :data:`EXIT_SECONDS`: the step in progress ends at its next look at
the clock and commits, so what it indexed is kept). ``SEGUE_INDEX_BUILDER=off`` turns the
thread off everywhere; calls then run one step each, as a one-shot command does.
"""

from __future__ import annotations

import atexit
import dataclasses
import os
import threading
import time

from segue.fsutil import describe_os_error
from segue.workspace import Layout

#: how long one step in the thread runs before it commits (a shorter step loses less to a
#: ``kill -9`` and lets a waiting process in sooner; a longer one pays less per step: on
#: 10 MB of realistic rows, 0.5 s steps took 1.3x a whole rebuild's time, 2 s steps 1.14x)
STEP_SECONDS = 1.0
#: at interpreter exit, how long to wait for each running step to commit
EXIT_SECONDS = 1.0
#: the setting that turns the thread off (``off``, ``0``, ``no``, ``false``)
ENV = "SEGUE_INDEX_BUILDER"


def enabled() -> bool:
    """Whether the environment allows the background builder."""
    return os.environ.get(ENV, "").strip().lower() not in {"off", "0", "no", "false"}


@dataclasses.dataclass
class Builder:
    """The background rebuild of one index file: its thread and how it ended."""

    layout: Layout
    thread: threading.Thread | None = None
    stopping: threading.Event = dataclasses.field(default_factory=threading.Event)
    #: steps committed by this builder's threads so far
    steps: int = 0
    #: why the last thread ended: "built", or the reason it could not go on
    outcome: str | None = None

    def running(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    def _loop(self) -> None:
        from segue.retrieval.index_build import NotBuilt
        from segue.retrieval.index_steps import build_step

        outcome = "stopped"
        try:
            while not self.stopping.is_set():
                done = build_step(
                    self.layout,
                    deadline=time.monotonic() + STEP_SECONDS,
                    until=self.stopping.is_set,
                )
                self.steps += 1
                if done is not None:
                    outcome = "built"
                    break
        except NotBuilt as exc:
            outcome = str(exc)
        except OSError as exc:
            outcome = describe_os_error(exc)
        except Exception as exc:  # noqa: BLE001 - a cache: never a traceback from a thread
            outcome = f"{type(exc).__name__}: {exc}"
        self.outcome = outcome


_LOCK = threading.Lock()
_BUILDERS: dict[str, Builder] = {}


def _key(layout: Layout) -> str:
    from segue.retrieval.index_file import index_path

    return os.path.realpath(index_path(layout))


def ensure(layout: Layout) -> Builder:
    """Start the background rebuild of ``layout``'s index unless it is already running in
    this process; never waits for it."""
    with _LOCK:
        key = _key(layout)
        builder = _BUILDERS.get(key)
        if builder is None:
            builder = _BUILDERS[key] = Builder(layout)
        if not builder.running():
            builder.stopping.clear()
            builder.outcome = None
            builder.thread = threading.Thread(
                target=builder._loop, name=f"segue-index-builder:{key}", daemon=True
            )
            builder.thread.start()
        return builder


def builder_for(layout: Layout) -> Builder | None:
    """This process's builder of ``layout``'s index (None: none was ever started)."""
    with _LOCK:
        return _BUILDERS.get(_key(layout))


def join(layout: Layout, timeout: float) -> bool:
    """Wait up to ``timeout`` seconds for the builder of ``layout``'s index to end; whether
    none is running now."""
    builder = builder_for(layout)
    thread = None if builder is None else builder.thread
    if thread is not None:
        thread.join(timeout)
        return not thread.is_alive()
    return True


def stop(layout: Layout | None = None, timeout: float = EXIT_SECONDS) -> bool:
    """Ask the builder of ``layout``'s index (None: every builder) to end after the step in
    progress commits, and wait up to ``timeout`` seconds for each; whether all ended."""
    with _LOCK:
        chosen = list(_BUILDERS.values()) if layout is None else [_BUILDERS.get(_key(layout))]
    ended = True
    for builder in chosen:
        if builder is None or builder.thread is None:
            continue
        builder.stopping.set()
        builder.thread.join(timeout)
        ended = ended and not builder.thread.is_alive()
    return ended


atexit.register(stop)
