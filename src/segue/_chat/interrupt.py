"""Running a turn so that Ctrl-C stops it cleanly.

The turn runs on the main thread with a SIGINT handler installed for that while only (the
previous handler is put back afterwards):

* A Ctrl-C calls ``on_interrupt`` (for a chat's turn: ``Cancellation.interrupt``). When it
  returns a notice, the press was taken by something smaller than the turn (a running task,
  R41: the child stops, the turn goes on) and the notice is shown; the next Ctrl-C asks
  again. When it returns None, the turn is stopping and says so; nothing is raised. A reply
  that is streaming stops at once (R40: the text received so far is kept as the reply,
  marked partial, and no tool call of it runs; see :mod:`segue._session.stoppable`); a
  running ``bash`` command is killed; otherwise the engine stops at its next safe point
  (before each provider step, after each settled tool step, around rollover admission).
  Every step that settled is already durable.
* A Ctrl-C after the turn is stopping raises :class:`QuitNow` where the turn is: the user
  will not wait. Tools clean up on the way out (the ``bash`` tool kills its command's process
  group); the step in flight is not recorded, and the store treats the exit like a crash
  (R28: every acknowledged batch whole, a torn one removed by the next locked operation).

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


def stopping_task(task_id: str, agent: str) -> str:
    """The notice of a Ctrl-C that stops a running task, and not the turn that started it."""
    return (f"stopping task {task_id} ({agent}); the turn goes on with its result "
            "(Ctrl-C again stops the turn)")


class QuitNow(BaseException):
    """A second Ctrl-C while a turn is stopping: leave at once.

    A BaseException, like KeyboardInterrupt, so that the engine's guard around tool calls
    (``except Exception``: a tool's bug becomes its error result) does not swallow it."""


#: Stops what a Ctrl-C stops: None when that is the turn, else the notice to show.
OnInterrupt = Callable[[], str | None]


def run_interruptible(
    work: Callable[[], T],
    on_interrupt: OnInterrupt,
    notify: Callable[[str], None],
) -> T:
    """Run ``work`` with Ctrl-C mapped to ``on_interrupt`` until that stops the turn, and
    to QuitNow after it.

    Must be called from the main thread, which is where Python runs signal handlers.
    """
    if threading.current_thread() is not threading.main_thread():
        raise RuntimeError("run_interruptible must be called from the main thread")
    stopping = False

    def on_sigint(_signum: int, _frame: FrameType | None) -> None:
        nonlocal stopping
        if stopping:
            raise QuitNow
        said = on_interrupt()
        if said is None:
            stopping = True
            said = INTERRUPTING
        notify(said)

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
