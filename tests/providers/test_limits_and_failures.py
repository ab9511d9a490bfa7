"""Pure parts of the API providers: the context-limit table, Retry-After, error classes."""

from __future__ import annotations

import pytest

from segue import SettingsError, UsageError
from segue import _settings as settings_module
from segue._errors import (
    ContextOverflowError,
    ProviderAuthError,
    ProviderError,
    TransientProviderError,
)
from segue._providers import parse_model
from segue._providers.failures import ApiFailure, classify
from segue._providers.keys import CONTEXT_WINDOW_PREFIX, ENCODING_PREFIX
from segue._providers.limits import context_window, table_limit
from segue._providers.retry import RetryPolicy, describe_wait, retry_after_seconds
from segue._settings import Settings


@pytest.mark.parametrize(("model", "limit"), [
    ("openai:gpt-4o", 128_000),
    ("openai:gpt-4o-2024-08-06", 128_000),
    ("openai:gpt-4o-mini", 128_000),
    ("openai:gpt-4.1", 1_047_576),
    ("openai:gpt-4.1-nano-2025-04-14", 1_047_576),
    ("openai:o3", 200_000),
    ("openai:o4-mini", 200_000),
    ("openai:o1-mini", 128_000),
    ("openai:gpt-5", 400_000),
    ("openai:gpt-5-mini", 400_000),
    ("openai:gpt-4", 8_192),
    ("anthropic:claude-sonnet-4-6", 200_000),
    ("anthropic:claude-opus-4-1-20250805", 200_000),
    ("anthropic:claude-haiku-4-5", 200_000),
    ("anthropic:claude-3-7-sonnet-20250219", 200_000),
    ("openai-compatible:openai/gpt-4o", 128_000),
])
def test_table(model: str, limit: int) -> None:
    assert context_window(parse_model(model), {}) == limit


def test_override_wins_and_is_required_where_the_table_is_silent() -> None:
    ref = parse_model("anthropic:claude-sonnet-4-6")
    assert context_window(ref, {"contextWindow.anthropic:claude-sonnet-4-6": 1_000_000}) == (
        1_000_000)
    assert table_limit("openai-compatible", "qwen2.5-coder:7b") is None
    with pytest.raises(UsageError, match="sets its own context length"):
        context_window(parse_model("openai-compatible:qwen2.5-coder:7b"), {})
    with pytest.raises(UsageError, match="does not know it"):
        context_window(parse_model("anthropic:claude-opus-9"), {})


def test_settings_validate_the_new_keys() -> None:
    assert CONTEXT_WINDOW_PREFIX == settings_module.CONTEXT_WINDOW_PREFIX
    assert ENCODING_PREFIX == settings_module.ENCODING_PREFIX
    s = Settings().with_value("contextWindow.openai-compatible:llama3.1:8b", 131_072)
    assert s.values["contextWindow.openai-compatible:llama3.1:8b"] == 131_072
    with pytest.raises(SettingsError, match="tokens"):
        Settings().with_value("contextWindow.openai:gpt-4o", "big")
    with pytest.raises(SettingsError):
        Settings().with_value("contextWindow.nope", 8192)
    with pytest.raises(SettingsError):
        Settings().with_value("fallbackModel", "gpt-4o")
    assert Settings().with_value("fallbackModel", "openai:gpt-4o-mini").get(
        "fallbackModel") == "openai:gpt-4o-mini"


def test_retry_after_forms() -> None:
    assert retry_after_seconds({"Retry-After": "7"}) == 7.0
    assert retry_after_seconds({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:10 GMT"},
                               now=1445412480.0) == 10.0
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None
    policy = RetryPolicy(base_delay=1.0, max_delay=30.0)
    assert describe_wait(45) == "45 s" and describe_wait(900) == "15 min"
    assert describe_wait(86_400) == "24.0 h"
    assert [policy.delay(n, None) for n in (1, 2, 3, 6)] == [1.0, 2.0, 4.0, 30.0]
    assert policy.delay(1, 12.5) == 12.5  # exactly what the server asked for


@pytest.mark.parametrize(("failure", "kind"), [
    (ApiFailure("X", "prompt is too long: 210000 tokens > 200000 maximum", 400,
                "invalid_request_error"), ContextOverflowError),
    (ApiFailure("X", "This model's maximum context length is 32768 tokens. However, you "
                     "requested 40000 tokens", 400, "BadRequestError"), ContextOverflowError),
    (ApiFailure("X", "the request exceeds the available context size", 400,
                "exceed_context_size_error"), ContextOverflowError),
    (ApiFailure("X", "too large", 413), ContextOverflowError),
    (ApiFailure("X", "bad key", 401), ProviderAuthError),
    (ApiFailure("X", "slow down", 429), TransientProviderError),
    (ApiFailure("X", "Overloaded", 529, "overloaded_error"), TransientProviderError),
    (ApiFailure("X", "Overloaded", None, "overloaded_error"), TransientProviderError),
    (ApiFailure("X", "refused", connection=True), TransientProviderError),
    (ApiFailure("X", "no such model", 404, "not_found_error"), ProviderError),
    (ApiFailure("X", "messages.0: bad role", 400, "invalid_request_error"), ProviderError),
    # A per-minute token limit is a rate limit, whatever its words.
    (ApiFailure("X", "Request too large for gpt-4o: Limit 30000, Requested 45000 tokens per "
                     "min (TPM); too many tokens", 429, "tokens", "rate_limit_exceeded"),
     TransientProviderError),
    # A 500 that is an overflow (llama.cpp) is not a server error to retry.
    (ApiFailure("X", "Context size has been exceeded.", 500, "server_error", "500"),
     ContextOverflowError),
    (ApiFailure("X", "Internal server error", 500, "api_error"), TransientProviderError),
    # "context window" alone is an overflow only when the request was refused as bad.
    (ApiFailure("X", "context window service unavailable", 503), TransientProviderError),
])
def test_classify(failure: ApiFailure, kind: type[ProviderError]) -> None:
    assert type(classify(failure, key_env="K")) is kind
