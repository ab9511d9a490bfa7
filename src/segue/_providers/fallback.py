"""A fallback model tried when the primary one fails (settings key ``fallbackModel``).

Invariants:

* The fallback receives the **same** prepared :class:`~segue._providers.request.ProviderRequest`
  object the primary was given: no second assembly (R21, R32 — the rollover turn's primary
  and fallback requests run the same snapshot).
* Only a :class:`~segue._errors.ProviderError` that is not a context overflow triggers it.
  Overflow is the engine's backstop (R17) and must reach it; usage errors are bugs or
  configuration, not outages.
* The fallback is not tried once the primary has streamed output to the caller: those
  deltas are already shown, and a second model's reply after them would read as one.
* ``context_window`` is the smaller of the two, so a request the engine admits fits either
  model; ``model`` and ``encoding`` are the primary's (rows and calibration are keyed by the
  model the user chose; counts for the other family stay estimates either way, R17).
* When both fail the error raised names both failures.
* The fallback may be :class:`Deferred`: built only when the primary has failed, so a
  fallback whose key (SDK, base URL, script) is missing never blocks the runs that do not
  need it. When it cannot be built then, the error names the ``fallbackModel`` setting, the
  primary's failure and why the fallback could not be used. Its context window is known
  up front where that needs no credentials (the limits table, a ``contextWindow`` setting);
  otherwise the primary's window is budgeted, and a fallback that finds a request too large
  says so like any provider (a context overflow: the engine's backstop).
"""

from __future__ import annotations

from collections.abc import Callable

from segue._errors import ContextOverflowError, ProviderError, SegueError
from segue._providers.base import EventSink, Provider, StepResult, StreamEvent
from segue._providers.keys import FALLBACK_SETTING
from segue._providers.request import ProviderRequest


class Deferred:
    """A fallback model not built yet: ``build`` makes it the first time it is needed."""

    def __init__(
        self, model: str, build: Callable[[], Provider], *, context_window: int | None
    ) -> None:
        self.model = model
        self.build = build
        #: The model's window where it is known without building it, else None.
        self.context_window = context_window


class FallbackProvider:
    def __init__(self, primary: Provider, fallback: Provider | Deferred) -> None:
        self.primary = primary
        self._fallback = fallback
        #: The provider whose reply the last successful step returned (for display/tests).
        self.last_used: Provider | None = None

    @property
    def fallback(self) -> Provider | None:
        """The fallback provider, or None while a deferred one has not been needed."""
        return None if isinstance(self._fallback, Deferred) else self._fallback

    @property
    def model(self) -> str:
        return self.primary.model

    @property
    def context_window(self) -> int:
        other = self._fallback.context_window
        return self.primary.context_window if other is None else min(
            self.primary.context_window, other)

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
            fallback = self._resolve(first)
            try:
                result = fallback.step(request, on_event=on_event)
            except ContextOverflowError:
                raise
            except ProviderError as second:
                raise ProviderError(
                    f"{self.primary.model} failed ({first.message}); the fallback "
                    f"{fallback.model} failed too ({second.message})"
                ) from second
            self.last_used = fallback
            return result
        self.last_used = self.primary
        return result

    def _resolve(self, first: ProviderError) -> Provider:
        """The fallback, built now if it was deferred; a fallback that cannot be built is
        reported with the setting that names it and the primary's own failure."""
        pending = self._fallback
        if not isinstance(pending, Deferred):
            return pending
        try:
            built = pending.build()
        except SegueError as exc:
            raise ProviderError(
                f"{self.primary.model} failed ({first.message}); the fallback model "
                f"{pending.model} (setting {FALLBACK_SETTING}) cannot be used: {exc.message}"
            ) from None
        self._fallback = built
        return built
