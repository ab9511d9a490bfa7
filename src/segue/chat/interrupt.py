"""Running a turn so that Ctrl-C stops it cleanly.

The turn runs on the main thread with a SIGINT handler installed for that while only (the
previous handler is put back afterwards):

* The first Ctrl-C calls ``on_interrupt`` (for a turn: ``session.cancellation.cancel()``) and
  says so; nothing is raised. A reply that is streaming stops at once (R40: the text received
  so far is kept as the reply, marked partial, and no tool call of it runs; see
  :mod:`segue.session.stoppable`); a running ``bash`` command is killed; otherwise the
  engine stops at its next safe point (before each provider step, after each settled tool
  step, around rollover admission). Every step that settled is already durable.
* A second Ctrl-C raises :class:`QuitNow` where the turn is: the user will not wait. Tools
  clean up on the way out (the ``bash`` tool kills its command's process group); the step in
  flight is not recorded, and the store treats the exit like a crash (R28: every
  acknowledged batch whole, a torn one removed by the next locked operation).

Why the turn itself is not moved to a worker thread: a thread cannot be stopped from
outside, so its tool calls (a shell command in its own process group) would outlive a quit.
Only the provider call runs in one, and a stopped call's late output is dropped.

``notify`` is called from the signal handler, so it must not write through a buffered
stream the interrupted code may be writing to (the CLI writes with ``os.write``).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import TypeVar

T = TypeVar("T")

INTERRUPTING = "interrupting: stopping the turn (Ctrl-C again to quit now)"


class QuitNow(BaseException):
    """A second Ctrl-C while a turn is stopping: leave at once.

    A BaseException, like KeyboardInterrupt, so that the engine's guard around tool calls
    (``except Exception``: a tool's bug becomes its error result) does not swallow it."""


def run_interruptible(
    work: Callable[[], T],
    on_interrupt: Callable[[], None],
    notify: Callable[[str], None],
) -> T:
    """Run ``work`` with Ctrl-C mapped to ``on_interrupt`` (first) and QuitNow (second).

    Must be called from the main thread, which is where Python runs signal handlers.
    """
    if threading.current_thread() is not threading.main_thread():
        raise RuntimeError("run_interruptible must be called from the main thread")
    presses = 0

    def on_sigint(_signum: int, _frame: FrameType | None) -> None:
        nonlocal presses
        presses += 1
        if presses > 1:
            raise QuitNow
        on_interrupt()
        notify(INTERRUPTING)

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        return work()
    finally:
        signal.signal(signal.SIGINT, previous)


@contextlib.contextmanager
def interrupts_raise() -> Iterator[None]:
    """While a question is asked in the middle of a turn (an approval), Ctrl-C raises
    KeyboardInterrupt at once, so it answers the question instead of waiting for Enter. Off
    the main thread (the full-screen chat's worker) nothing changes: there is no signal."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
