"""Running a turn so that Ctrl-C stops it cleanly.

The turn runs in a worker thread while the main thread waits for it with a SIGINT handler
installed (only for that while; the previous handler is put back afterwards):

* The first Ctrl-C calls ``on_interrupt`` (for a turn: ``session.cancellation.cancel()``) and
  says so. The engine checks cancellation at its safe points (before each provider step,
  after each settled tool step, and around rollover admission), so the turn stops at the
  next one: a provider step or a tool already running finishes first, and every settled
  step already appended stays durable. A provider call is synchronous and cannot be
  abandoned midway without losing what it returns, so a long call delays the stop.
* A second Ctrl-C while still waiting raises :class:`QuitNow`: the user does not want to wait
  for the step. The worker is a daemon thread and is abandoned with the process; the store
  makes that as safe as ``kill -9`` (R28: an acknowledged batch is whole, a torn one is
  removed by recovery).

Why a worker thread: Python runs signal handlers only in the main thread, between bytecodes.
Were the turn on the main thread, the handler could only set the flag too, but a second
Ctrl-C would have to raise KeyboardInterrupt into the middle of whatever the turn was doing
(a store append, a tool); here it only ever interrupts a wait.

``Session.send`` starts each turn with a fresh Cancellation, so a Ctrl-C that lands before
the worker gets there would be lost; the wait loop therefore re-asserts ``on_interrupt``
until the work ends (it must be idempotent).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import TypeVar

T = TypeVar("T")

#: How often the waiting main thread re-asserts a pending interrupt (seconds).
REASSERT_SECONDS = 0.05

INTERRUPTING = (
    "interrupting: the turn stops at the next safe point (Ctrl-C again to quit now)"
)


class QuitNow(Exception):
    """A second Ctrl-C while waiting for a turn to stop: leave at once."""


def run_interruptible(
    work: Callable[[], T],
    on_interrupt: Callable[[], None],
    notify: Callable[[str], None],
) -> T:
    """Run ``work`` in a worker thread and return its result (or raise its exception).

    Must be called from the main thread, which is where Python delivers SIGINT.
    """
    if threading.current_thread() is not threading.main_thread():
        raise RuntimeError("run_interruptible must be called from the main thread")
    results: list[T] = []
    errors: list[BaseException] = []
    done = threading.Event()
    presses = 0

    def target() -> None:
        try:
            results.append(work())
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread and re-raised
            errors.append(exc)
        finally:
            done.set()

    def on_sigint(_signum: int, _frame: FrameType | None) -> None:
        nonlocal presses
        presses += 1
        if presses > 1:
            raise QuitNow
        on_interrupt()
        notify(INTERRUPTING)

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        worker = threading.Thread(target=target, name="xum-turn", daemon=True)
        worker.start()
        while not done.wait(REASSERT_SECONDS):
            if presses:
                on_interrupt()
    finally:
        signal.signal(signal.SIGINT, previous)
    if errors:
        raise errors[0]
    return results[0]
