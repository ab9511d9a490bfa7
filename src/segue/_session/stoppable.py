"""One provider step that a cancel stops at once, mid-stream (SPEC.md R40).

A provider step is a blocking call (an HTTP stream read in the SDK), and a read cannot be
stopped from outside. So the step runs in a worker thread of its own while the turn's thread
waits for it *or* for the cancel flag, whichever comes first:

* Every streamed event goes through :class:`_Relay`, which forwards it to the turn's sink and
  keeps the text, under one lock. Once the turn is cancelled nothing more is forwarded: the
  next event the stream delivers raises :class:`_Stopped` inside the provider's own stream
  loop, which closes the response (``with stream:``) and ends the worker.
* On cancel the turn does not wait for that next event: it takes the text forwarded so far
  (what the user saw) and returns :class:`Interrupted` within one poll interval. A stream
  that stalls (no bytes at all) therefore cannot hold the stop up; its worker is a daemon
  that ends when the connection next delivers something or closes.
* Nothing of a stopped step's tool calls is returned: a call that had not finished streaming
  never runs (R40), and a stopped turn runs no calls at all.
* An error the step raises before the cancel is raised in the turn's thread, as if the step
  had run there; one raised after it is dropped (the turn has moved on).

Only the provider call moves to the worker: tools, approvals and every store write stay on
the turn's thread, so a quit (a second Ctrl-C) never leaves work running behind it that could
change the machine or the transcript.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from segue._providers.base import Provider, StepResult, StreamEvent, TextDelta
from segue._providers.request import ProviderRequest
from segue._session.admission import Cancellation

#: How often the waiting turn looks at the cancel flag (well inside R40's 0.5 s).
POLL_SECONDS = 0.02


@dataclass(frozen=True)
class Interrupted:
    """A step stopped by a cancel while it streamed: the text the user had seen."""

    text: str


class _Stopped(BaseException):
    """Raised inside a stopped step's stream loop to end it.

    A BaseException, so that no provider's ``except`` clause mistakes it for a failure to
    classify, retry or fall back from."""


class _Relay:
    def __init__(self, forward: Callable[[StreamEvent], None], cancel: Cancellation) -> None:
        self._forward = forward
        self._cancel = cancel
        self._lock = threading.Lock()
        self._detached = False
        self._text: list[str] = []

    def __call__(self, event: StreamEvent) -> None:
        with self._lock:
            if self._detached or self._cancel.cancelled:
                raise _Stopped
            if isinstance(event, TextDelta):
                self._text.append(event.text)
            self._forward(event)

    def detach(self) -> str:
        """Forward nothing more; the text forwarded so far."""
        with self._lock:
            self._detached = True
            return "".join(self._text)


def run_step(
    provider: Provider,
    request: ProviderRequest,
    forward: Callable[[StreamEvent], None],
    cancel: Cancellation,
) -> StepResult | Interrupted:
    """``provider.step(request)``, or :class:`Interrupted` as soon as ``cancel`` is set."""
    relay = _Relay(forward, cancel)
    done = threading.Event()
    outcome: list[StepResult] = []
    failure: list[BaseException] = []

    def work() -> None:
        try:
            outcome.append(provider.step(request, on_event=relay))
        except _Stopped:
            pass
        except BaseException as exc:  # noqa: BLE001 - raised again in the turn's thread
            failure.append(exc)
        finally:
            done.set()

    worker = threading.Thread(target=work, name="segue-provider-step", daemon=True)
    worker.start()
    # A timed wait: on the main thread a signal handler (Ctrl-C) runs between the polls.
    while not done.wait(POLL_SECONDS):
        if cancel.cancelled:
            return Interrupted(relay.detach())
    if failure:
        raise failure[0]
    if cancel.cancelled or not outcome:
        # The cancel came as the step ended: the reply counts as stopped, and no call runs.
        return Interrupted(relay.detach())
    return outcome[0]


__all__ = ["POLL_SECONDS", "Interrupted", "run_step"]
