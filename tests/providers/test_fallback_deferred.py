"""The fallback model is built when it is needed, not before (settings ``fallbackModel``)."""

from __future__ import annotations

import pytest

from segue import (
    Provider,
    ProviderRequest,
    StepResult,
    Usage,
    UsageError,
    create_provider,
    make_row,
)
from segue._errors import ProviderError
from segue._providers.base import EventSink
from segue._providers.fallback import Deferred, FallbackProvider
from segue._settings import Settings

REQUEST = ProviderRequest("", (make_row("user", "hi", id="u"),), ())


class Stub:
    def __init__(self, model: str, window: int, fails: bool = False) -> None:
        self.model, self.context_window, self.encoding = model, window, "o200k_base"
        self.fails = fails
        self.asked = 0

    def step(self, request: ProviderRequest, *, on_event: EventSink | None = None) -> StepResult:
        self.asked += 1
        if self.fails:
            raise ProviderError(f"{self.model} is down")
        return StepResult(f"from {self.model}", (), Usage(1, 1))


def test_the_fallback_is_built_once_and_only_when_the_primary_fails() -> None:
    built: list[Provider] = []

    def build() -> Provider:
        built.append(Stub("b", 50))
        return built[-1]

    primary = Stub("a", 100)
    made = FallbackProvider(primary, Deferred("b", build, context_window=50))
    assert made.context_window == 50  # known up front: the smaller window
    assert made.step(REQUEST).text == "from a" and built == [] and made.fallback is None
    primary.fails = True
    assert made.step(REQUEST).text == "from b"
    assert made.step(REQUEST).text == "from b"
    assert len(built) == 1 and made.fallback is built[0] and made.last_used is built[0]


def test_an_unknown_fallback_window_budgets_the_primarys() -> None:
    made = FallbackProvider(Stub("a", 100), Deferred("b", lambda: Stub("b", 10),
                                                     context_window=None))
    assert made.context_window == 100


def test_a_fallback_that_cannot_be_built_names_the_setting_and_both_reasons() -> None:
    def build() -> Provider:
        raise UsageError("model 'b' needs a key: export B_KEY=…")

    made = FallbackProvider(Stub("a", 100, fails=True), Deferred("b", build, context_window=None))
    with pytest.raises(ProviderError) as info:
        made.step(REQUEST)
    message = info.value.message
    assert "a is down" in message and "fallbackModel" in message and "B_KEY" in message


def test_create_provider_defers_a_fallback_without_its_key() -> None:
    settings = Settings().with_value("fallbackModel", "anthropic:claude-sonnet-4-5")
    made = create_provider("openai:gpt-4o", settings=settings,
                           environ={"OPENAI_API_KEY": "sk-test"})  # no ANTHROPIC_API_KEY
    assert isinstance(made, FallbackProvider) and made.fallback is None
    assert made.context_window == 128_000  # both windows known from the limits table
