"""run_interruptible with real SIGINT signals delivered to this process."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from xum.chat import QuitNow, run_interruptible
from xum.chat.interrupt import INTERRUPTING

WAIT = 10.0  # a deadline, never a pause: every wait below returns as soon as its event is set


def test_a_first_ctrl_c_calls_on_interrupt_and_the_work_finishes() -> None:
    cancelled = threading.Event()
    started = threading.Event()
    notes: list[str] = []
    previous = signal.getsignal(signal.SIGINT)

    def work() -> str:
        started.set()
        assert cancelled.wait(WAIT), "the interrupt never arrived"
        return "stopped at a safe point"

    def press() -> None:
        assert started.wait(WAIT)
        os.kill(os.getpid(), signal.SIGINT)

    presser = threading.Thread(target=press)
    presser.start()
    result = run_interruptible(work, cancelled.set, notes.append)
    presser.join()
    assert result == "stopped at a safe point"
    assert notes == [INTERRUPTING]
    assert signal.getsignal(signal.SIGINT) is previous  # installed only while the work ran


def test_a_second_ctrl_c_quits_without_waiting() -> None:
    release = threading.Event()
    first_handled = threading.Event()
    started = threading.Event()

    def work() -> None:
        started.set()
        release.wait(WAIT)

    def press_twice() -> None:
        assert started.wait(WAIT)
        os.kill(os.getpid(), signal.SIGINT)
        # Two signals sent back to back may arrive as one; press again once it was seen.
        assert first_handled.wait(WAIT)
        os.kill(os.getpid(), signal.SIGINT)

    presser = threading.Thread(target=press_twice)
    presser.start()
    try:
        with pytest.raises(QuitNow):
            run_interruptible(work, first_handled.set, lambda _text: None)
    finally:
        release.set()
        presser.join()


def test_an_interrupt_is_reasserted_until_the_work_ends() -> None:
    """A turn resets its cancellation when it starts; a press that came first must not be
    lost, so on_interrupt is called again while the work runs."""
    calls: list[int] = []
    enough = threading.Event()
    started = threading.Event()

    def on_interrupt() -> None:
        calls.append(1)
        if len(calls) >= 3:
            enough.set()

    def work() -> int:
        started.set()
        assert enough.wait(WAIT)
        return len(calls)

    def press() -> None:
        assert started.wait(WAIT)
        os.kill(os.getpid(), signal.SIGINT)

    presser = threading.Thread(target=press)
    presser.start()
    assert run_interruptible(work, on_interrupt, lambda _text: None) >= 3
    presser.join()


def test_the_work_s_exception_reaches_the_caller() -> None:
    def work() -> None:
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        run_interruptible(work, lambda: None, lambda _text: None)


def test_only_the_main_thread_may_wait() -> None:
    errors: list[BaseException] = []

    def call() -> None:
        try:
            run_interruptible(lambda: None, lambda: None, lambda _text: None)
        except RuntimeError as exc:
            errors.append(exc)

    thread = threading.Thread(target=call)
    thread.start()
    thread.join()
    assert len(errors) == 1
