"""The ``anthropic:`` adapter driven through the real Anthropic SDK with recorded HTTP
responses (tests/providers/fixtures/anthropic_*)."""

from __future__ import annotations

import json

import pytest

from segue import Part, ProviderRequest, UsageError, create_provider, make_row
from segue._errors import (
    ContextOverflowError,
    ProviderAuthError,
    ProviderError,
    TransientProviderError,
)
from segue._providers import StreamEvent, TextDelta, ToolCall, ToolCallEvent
from segue._providers.anthropic_messages import AnthropicProvider, anthropic_messages
from segue._providers.fallback import FallbackProvider
from segue._providers.openai_chat import OpenAIChatProvider
from segue._providers.retry import RetryPolicy
from segue._settings import Settings

from .replay import Replay, error, no_wait, sse

MODEL = "anthropic:claude-sonnet-4-6"
ENV = {"ANTHROPIC_API_KEY": "sk-ant-test"}
ECHO = {"name": "echo", "description": "Repeat a word.",
        "input_schema": {"type": "object", "properties": {"word": {"type": "string"}}}}


def request(text: str = "What is the capital of France?") -> ProviderRequest:
    return ProviderRequest("Be brief.", (make_row("user", text, id="u1"),), (ECHO,))


def provider(replay: Replay, sleeps: list[float] | None = None,
             env: dict[str, str] | None = None) -> AnthropicProvider:
    made = create_provider(
        MODEL, environ=ENV if env is None else env, http_client=replay.client(),
        retry=RetryPolicy(sleep=(sleeps if sleeps is not None else []).append),
    )
    assert isinstance(made, AnthropicProvider)
    return made


def test_streamed_text_usage_counts_cached_input_and_the_request_shape() -> None:
    replay = Replay(sse("anthropic_stream_text.sse"))
    events: list[StreamEvent] = []
    made = provider(replay)
    result = made.step(request(), on_event=events.append)
    assert [e.text for e in events if isinstance(e, TextDelta)] == [
        "Hello", "! The capital", " of France is Paris."]
    assert result.text == "Hello! The capital of France is Paris."
    # input_tokens + cache_read + cache_creation: all of it was prompt the model read.
    assert result.usage.to_obj() == {
        "inputTokens": 25 + 1800 + 120, "outputTokens": 15,
        "cacheReadTokens": 1800, "cachedInputTokens": 1800, "cacheWriteTokens": 120}
    (sent,) = replay.requests
    assert sent.url.path == "/v1/messages"
    # The SDK sends the key as x-api-key (or, in newer releases, as a bearer token).
    assert "sk-ant-test" in (sent.headers.get("x-api-key"), sent.headers.get("authorization",
                                                                             "")[7:])
    body = json.loads(sent.content)
    assert body["model"] == "claude-sonnet-4-6"
    assert body["stream"] is True
    # The system text is one block carrying a cache breakpoint (the tools + system prefix).
    assert body["system"] == [{"type": "text", "text": "Be brief.",
                               "cache_control": {"type": "ephemeral"}}]
    assert body["max_tokens"] == 8192  # R3's output reserve for a 200k window
    assert made.context_window == 200_000
    assert body["messages"] == [{"role": "user", "content": [
        {"type": "text", "text": "What is the capital of France?",
         "cache_control": {"type": "ephemeral"}}]}]
    # The last tool carries the first breakpoint: every window repeats the tool schemas.
    assert body["tools"] == [{**ECHO, "cache_control": {"type": "ephemeral"}}]


def test_streamed_tool_use_input_is_assembled_from_json_deltas() -> None:
    replay = Replay(sse("anthropic_stream_tool_use.sse"))
    events: list[StreamEvent] = []
    result = provider(replay).step(request(), on_event=events.append)
    assert result.text == "I'll echo that for you."
    assert result.tool_calls == (
        ToolCall("toolu_01T1x1fJ34qAmk2tNTrN7Up6", "echo", {"word": "café", "times": 3}),)
    assert [e.call for e in events if isinstance(e, ToolCallEvent)] == list(result.tool_calls)
    assert result.usage.to_obj() == {"inputTokens": 472, "outputTokens": 89, "cacheReadTokens": 0,
                                      "cachedInputTokens": 0, "cacheWriteTokens": 0}


def test_tool_history_is_replayed_as_tool_use_and_tool_result_blocks() -> None:
    call = Part(type="dynamic-tool", toolCallId="toolu_1", toolName="echo",
                input={"word": "hi"}, state="output-error", output={"ok": False})
    rows = (
        make_row("user", "say hi", id="u1"),
        make_row("assistant", "Calling.", id="a1", parts=[call]),
        make_row("user", "thanks", id="u2"),
        make_row("system", "note", id="s1"),
    )
    assert anthropic_messages(ProviderRequest("sys", rows, ())) == [
        {"role": "user", "content": [{"type": "text", "text": "say hi"}]},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Calling."},
            {"type": "tool_use", "id": "toolu_1", "name": "echo", "input": {"word": "hi"}}]},
        # One user turn: the result first, then the user's text, then the system row.
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": '{"ok":false}',
             "is_error": True},
            {"type": "text", "text": "thanks"},
            {"type": "text", "text": "note"}]},
    ]


def test_overloaded_then_success_is_retried() -> None:
    replay = Replay(error(529, "anthropic_overloaded.json", {"retry-after": "3"}),
                    sse("anthropic_stream_text.sse"))
    sleeps: list[float] = []
    result = provider(replay, sleeps).step(request())
    assert result.text == "Hello! The capital of France is Paris."
    assert len(replay.requests) == 2
    assert sleeps == [3.0]


def test_rate_limit_without_retry_after_backs_off_exponentially() -> None:
    replay = Replay(error(429, "anthropic_overloaded.json"),
                    error(429, "anthropic_overloaded.json"),
                    sse("anthropic_stream_text.sse"))
    sleeps: list[float] = []
    provider(replay, sleeps).step(request())
    assert sleeps == [1.0, 2.0]
    replay.assert_done()


def test_overload_inside_the_stream_before_output_is_retried() -> None:
    replay = Replay(sse("anthropic_stream_overloaded.sse"), sse("anthropic_stream_text.sse"))
    sleeps: list[float] = []
    result = provider(replay, sleeps).step(request())
    assert result.text.startswith("Hello")
    assert sleeps == [1.0]


def test_overload_inside_the_stream_after_output_is_not_retried() -> None:
    replay = Replay(sse("anthropic_stream_overloaded_after_text.sse"))
    events: list[StreamEvent] = []
    with pytest.raises(TransientProviderError, match="already started streaming"):
        provider(replay).step(request(), on_event=events.append)
    assert events == [TextDelta("Partial")]
    replay.assert_done()


@pytest.mark.parametrize(("status", "name"), [
    (400, "anthropic_prompt_too_long.json"),
    (413, "anthropic_request_too_large.json"),
])
def test_prompt_too_long_and_request_too_large_are_overflow(status: int, name: str) -> None:
    replay = Replay(error(status, name))
    with pytest.raises(ContextOverflowError):
        provider(replay).step(request())
    replay.assert_done()


def test_auth_error_names_the_key_to_set() -> None:
    replay = Replay(error(401, "anthropic_authentication_error.json"))
    with pytest.raises(ProviderAuthError, match="set ANTHROPIC_API_KEY"):
        provider(replay).step(request())
    replay.assert_done()


def test_missing_key_is_a_usage_error_before_any_request() -> None:
    replay = Replay()
    with pytest.raises(UsageError, match="export ANTHROPIC_API_KEY"):
        provider(replay, env={})
    assert replay.requests == []


def test_fallback_across_providers_gets_the_same_prepared_request() -> None:
    replay = Replay(error(529, "anthropic_overloaded.json"),
                    error(529, "anthropic_overloaded.json"),
                    error(529, "anthropic_overloaded.json"),
                    sse("openai_stream_text.sse"))
    made = create_provider(
        MODEL, environ={**ENV, "OPENAI_API_KEY": "sk-test"}, http_client=replay.client(),
        settings=Settings().with_value("fallbackModel", "openai:gpt-4o"),
        retry=RetryPolicy(sleep=no_wait),
    )
    assert isinstance(made, FallbackProvider)
    assert made.context_window == 128_000
    events: list[StreamEvent] = []
    result = made.step(request(), on_event=events.append)
    assert result.text == "The capital of France is Paris."
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == result.text
    assert [r.url.path for r in replay.requests] == ["/v1/messages"] * 3 + [
        "/v1/chat/completions"]
    assert isinstance(made.last_used, OpenAIChatProvider)
    anthropic_body, openai_body = replay.bodies()[0], replay.bodies()[3]
    assert anthropic_body["messages"][0]["content"][0]["text"] == openai_body["messages"][1][
        "content"]


def test_both_failing_names_both() -> None:
    replay = Replay(error(401, "anthropic_authentication_error.json"),
                    error(401, "openai_invalid_api_key.json"))
    made = create_provider(
        MODEL, environ={**ENV, "OPENAI_API_KEY": "sk-test"}, http_client=replay.client(),
        settings=Settings().with_value("fallbackModel", "openai:gpt-4o"))
    with pytest.raises(ProviderError, match=r"anthropic:claude-sonnet-4-6 failed .*"
                                            r"openai:gpt-4o failed too"):
        made.step(request())
