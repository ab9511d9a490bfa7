"""The turn's cancel flag and its tasks' flags (SPEC.md R40, R41): one Ctrl-C stops the
running task, or the turn when none runs (or the task is already stopping); stopping a turn
stops every task under it, a task's task included."""

from __future__ import annotations

import pytest

from segue._errors import TurnCancelled
from segue._session import Cancellation


def test_the_first_interrupt_stops_the_task_and_the_next_the_turn() -> None:
    turn = Cancellation()
    with turn.task("ws.t1", "exec") as child:
        stopped = turn.interrupt()
        assert stopped is not None and stopped.task_id == "ws.t1" and stopped.agent == "exec"
        assert child.cancelled and child.stopped_alone and not turn.cancelled
        with pytest.raises(TurnCancelled):
            child.check("after a settled tool step")
        turn.check("after a settled tool step")  # the turn goes on
        assert turn.interrupt() is None  # the task is stopping: this one is the turn's
        assert turn.cancelled and child.cancelled and not child.stopped_alone
    assert turn.running_task is None


def test_an_interrupt_with_no_task_running_stops_the_turn() -> None:
    turn = Cancellation()
    with turn.task("ws.t1", "explore"):
        pass  # that task ended; the next one has its own Ctrl-C again
    assert turn.interrupt() is None and turn.cancelled
    with turn.task("ws.t2", "exec") as late:
        assert late.cancelled  # a task started by a stopping turn is stopped from the start


def test_stopping_the_turn_stops_a_tasks_task() -> None:
    turn = Cancellation()
    with turn.task("ws.t1", "exec") as child, child.task("ws.t1.t1", "explore") as grandchild:
        assert turn.running_task is not None and turn.running_task.task_id == "ws.t1"
        assert child.running_task is not None and child.running_task.task_id == "ws.t1.t1"
        turn.cancel()
        assert grandchild.cancelled and not grandchild.stopped_alone
    assert turn.running_task is None


def test_each_task_of_a_turn_has_its_own_first_interrupt() -> None:
    turn = Cancellation()
    with turn.task("ws.t1", "exec"):
        assert turn.interrupt() is not None
    with turn.task("ws.t2", "exec") as second:
        assert not second.cancelled
        stopped = turn.interrupt()
        assert stopped is not None and stopped.task_id == "ws.t2"
    assert not turn.cancelled
