"""run_interruptible with real SIGINT signals delivered to this process."""

from __future__ import annotations

import signal
import threading
import time

import pytest

from segue._chat import QuitNow, run_interruptible
from segue._chat.interrupt import INTERRUPTING

WAIT = 10.0  # a deadline, never a pause: every wait below returns as soon as its event is set


def _busy_until(event: threading.Event) -> bool:
    """Work that runs until ``event`` is set, in short blocking slices like the bash tool's
    output pump. (A signal that lands just before one long blocking wait starts is only
    seen when that wait ends: a CPython limitation that short slices bound.)"""
    deadline = time.monotonic() + WAIT
    while not event.wait(0.05):
        if time.monotonic() > deadline:
            return False
    return True


def _press_when(ready: threading.Event, *then: threading.Event) -> threading.Thread:
    """Ctrl-C once ``ready`` is set, then once more after each of ``then`` is set (two
    signals sent back to back may be delivered as one).

    The signal is aimed at the main thread, as a terminal's SIGINT is in practice: sent to
    the process from this thread, the kernel may deliver it here, and the main thread would
    not notice before its wait ends."""
    main = threading.main_thread().ident
    assert main is not None

    def press() -> None:
        assert ready.wait(WAIT)
        signal.pthread_kill(main, signal.SIGINT)
        for event in then:
            assert event.wait(WAIT)
            signal.pthread_kill(main, signal.SIGINT)

    thread = threading.Thread(target=press)
    thread.start()
    return thread


def test_a_first_ctrl_c_calls_on_interrupt_and_the_work_goes_on_to_its_end() -> None:
    started = threading.Event()
    cancelled = threading.Event()
    notes: list[str] = []
    previous = signal.getsignal(signal.SIGINT)

    def work() -> str:
        started.set()
        assert _busy_until(cancelled), "the interrupt never arrived"
        return "stopped at a safe point"

    presser = _press_when(started)
    assert run_interruptible(work, cancelled.set, notes.append) == "stopped at a safe point"
    presser.join()
    assert notes == [INTERRUPTING]
    assert signal.getsignal(signal.SIGINT) is previous  # installed only while the work ran


def test_a_second_ctrl_c_quits_through_the_work_s_cleanup() -> None:
    started = threading.Event()
    first = threading.Event()
    cleaned_up: list[bool] = []

    def work() -> None:
        started.set()
        try:
            _busy_until(threading.Event())  # a tool that would run on and on
        finally:
            cleaned_up.append(True)  # e.g. the bash tool killing its process group

    presser = _press_when(started, first)
    with pytest.raises(QuitNow):
        run_interruptible(work, first.set, lambda _text: None)
    presser.join()
    assert cleaned_up == [True]


def test_the_work_s_exception_reaches_the_caller_and_the_handler_is_restored() -> None:
    previous = signal.getsignal(signal.SIGINT)

    def work() -> None:
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        run_interruptible(work, lambda: None, lambda _text: None)
    assert signal.getsignal(signal.SIGINT) is previous


def test_only_the_main_thread_may_run_it() -> None:
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
