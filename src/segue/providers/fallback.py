"""A fallback model tried when the primary one fails (settings key ``fallbackModel``).

Invariants:

* The fallback receives the **same** prepared :class:`~segue.providers.request.ProviderRequest`
  object the primary was given: no second assembly (R21, R32 — the rollover turn's primary
  and fallback requests run the same snapshot).
* Only a :class:`~segue.errors.ProviderError` that is not a context overflow triggers it.
  Overflow is the engine's backstop (R17) and must reach it; usage errors are bugs or
  configuration, not outages.
* The fallback is not tried once the primary has streamed output to the caller: those
  deltas are already shown, and a second model's reply after them would read as one.
* ``context_window`` is the smaller of the two, so a request the engine admits fits either
  model; ``model`` and ``encoding`` are the primary's (rows and calibration are keyed by the
  model the user chose; counts for the other family stay estimates either way, R17).
* When both fail the error raised names both failures.
"""

from __future__ import annotations

from segue.errors import ContextOverflowError, ProviderError
from segue.providers.base import EventSink, Provider, StepResult, StreamEvent
from segue.providers.request import ProviderRequest


class FallbackProvider:
    def __init__(self, primary: Provider, fallback: Provider) -> None:
        self.primary = primary
        self.fallback = fallback
        #: The provider whose reply the last successful step returned (for display/tests).
        self.last_used: Provider | None = None

    @property
    def model(self) -> str:
        return self.primary.model

    @property
    def context_window(self) -> int:
        return min(self.primary.context_window, self.fallback.context_window)

    @property
    def encoding(self) -> str:
        return self.primary.encoding

    def step(self, request: ProviderRequest, *, on_event: EventSink | None = None) -> StepResult:
        streamed = False

        def forward(event: StreamEvent) -> None:
            nonlocal streamed
            streamed = True
            if on_event is not None:
                on_event(event)

        try:
            result = self.primary.step(request, on_event=forward)
        except ContextOverflowError:
            raise
        except ProviderError as first:
            if streamed:
                raise
            try:
                result = self.fallback.step(request, on_event=on_event)
            except ContextOverflowError:
                raise
            except ProviderError as second:
                raise ProviderError(
                    f"{self.primary.model} failed ({first.message}); the fallback "
                    f"{self.fallback.model} failed too ({second.message})"
                ) from second
            self.last_used = self.fallback
            return result
        self.last_used = self.primary
        return result
