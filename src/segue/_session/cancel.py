"""The turn's cancel flag, and the flags of the tasks it runs (SPEC.md R40, R41).

The edge (Ctrl-C, Esc, leaving a stream) sets a turn's :class:`Cancellation`; the engine
checks it at safe points and a streaming step polls it. A ``task`` call runs its child's turn
under a flag of its own, made with :meth:`Cancellation.task`:

* the child's flag reads as set when it is set *or* when its parent's is: stopping a turn
  stops every task under it;
* :meth:`Cancellation.interrupt` is one Ctrl-C in a chat: it stops the task that is running
  (the child's own Ctrl-C; the parent's turn reads the stopped task's result and goes on),
  and when no task runs, or the running one is already stopping, it stops the turn itself.

Nothing here takes a lock: :meth:`interrupt` runs in a SIGINT handler on the very thread
that starts and ends tasks, and every update is one attribute assignment.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

from segue._errors import TurnCancelled


@dataclass(frozen=True)
class RunningTask:
    """The task a turn is running now: its child workspace, its agent and its flag."""

    task_id: str
    agent: str
    cancellation: Cancellation


class Cancellation:
    """A flag the edge sets (Ctrl-C); the engine checks it at safe points."""

    def __init__(self, parent: Cancellation | None = None) -> None:
        self._cancelled = False
        self._parent = parent
        self._task: RunningTask | None = None

    def cancel(self) -> None:
        self._cancelled = True

    @property
    def cancelled(self) -> bool:
        """Set here, or on the turn that runs this one as a task."""
        return self._cancelled or (self._parent is not None and self._parent.cancelled)

    @property
    def stopped_alone(self) -> bool:
        """This flag was set itself while the turn above it goes on (a stopped task)."""
        return self._cancelled and not (self._parent is not None and self._parent.cancelled)

    def check(self, where: str) -> None:
        if self.cancelled:
            raise TurnCancelled(f"cancelled {where}")

    @property
    def running_task(self) -> RunningTask | None:
        return self._task

    @contextlib.contextmanager
    def task(self, task_id: str, agent: str) -> Iterator[Cancellation]:
        """The flag of a task this turn runs, while it runs."""
        running = RunningTask(task_id, agent, Cancellation(parent=self))
        previous, self._task = self._task, running
        try:
            yield running.cancellation
        finally:
            self._task = previous

    def interrupt(self) -> RunningTask | None:
        """One Ctrl-C: stop the running task (returned) if it is not stopping yet; else
        stop this turn (None)."""
        running = self._task
        if running is not None and not running.cancellation.cancelled:
            running.cancellation.cancel()
            return running
        self.cancel()
        return None


__all__ = ["Cancellation", "RunningTask"]
