"""The ``openai:`` / ``openai-compatible:`` adapter driven through the real OpenAI SDK with
recorded HTTP responses (tests/providers/fixtures/openai_*)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from segue import Part, ProviderRequest, Session, UsageError, create_provider, make_row
from segue._errors import (
    ContextOverflowError,
    ProviderAuthError,
    ProviderError,
    TransientProviderError,
    UnknownModelError,
)
from segue._providers import StreamEvent, TextDelta, ToolCall, ToolCallEvent
from segue._providers.fallback import FallbackProvider
from segue._providers.openai_chat import OpenAIChatProvider, chat_messages
from segue._providers.retry import RetryPolicy
from segue._settings import Settings

from .replay import Replay, error, no_wait, sse

ENV = {"OPENAI_API_KEY": "sk-test"}
ECHO = {"name": "echo", "description": "Repeat a word.",
        "input_schema": {"type": "object", "properties": {"word": {"type": "string"}}}}


def request(text: str = "What is the capital of France?") -> ProviderRequest:
    return ProviderRequest("Be brief.", (make_row("user", text, id="u1"),), (ECHO,))


def provider(replay: Replay, sleeps: list[float] | None = None, model: str = "openai:gpt-4o",
             env: dict[str, str] | None = None, settings: Settings | None = None,
             ) -> OpenAIChatProvider:
    made = create_provider(
        model, environ=ENV if env is None else env, settings=settings,
        http_client=replay.client(),
        retry=RetryPolicy(sleep=(sleeps if sleeps is not None else []).append),
    )
    assert isinstance(made, OpenAIChatProvider)
    return made


def test_plain_text_and_usage() -> None:
    replay = Replay(sse("openai_plain_text.sse"))
    result = provider(replay).step(request("Hi"))
    assert result.text == "Hello! How can I help you today?"
    assert result.tool_calls == ()
    assert result.usage.to_obj() == {"inputTokens": 9, "outputTokens": 10,
                                      "cacheReadTokens": 0, "cachedInputTokens": 0}
    replay.assert_done()


def test_streamed_text_arrives_as_deltas_and_the_request_is_chat_completions() -> None:
    replay = Replay(sse("openai_stream_text.sse"))
    events: list[StreamEvent] = []
    result = provider(replay).step(request(), on_event=events.append)
    assert [e.text for e in events if isinstance(e, TextDelta)] == [
        "The", " capital", " of", " France", " is", " Paris", "."]
    assert result.text == "The capital of France is Paris."
    assert result.usage.input_tokens == 19
    assert result.usage.output_tokens == 8
    (sent,) = replay.requests
    assert sent.url.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == "Bearer sk-test"
    body = json.loads(sent.content)
    assert body["model"] == "gpt-4o"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What is the capital of France?"},
    ]
    assert body["tools"] == [{"type": "function", "function": {
        "name": "echo", "description": "Repeat a word.",
        "parameters": ECHO["input_schema"]}}]


def test_streamed_tool_call_arguments_are_assembled_across_chunks() -> None:
    replay = Replay(sse("openai_stream_tool_calls.sse"))
    events: list[StreamEvent] = []
    result = provider(replay).step(request(), on_event=events.append)
    assert result.text == "Let me look."
    assert result.tool_calls == (
        ToolCall("call_DdmO9pD3xa9XTPNJ32zg2hcA", "echo", {"word": "café", "times": 3}),
        ToolCall("call_ABTdSOMVJdo5q7AXyS3L3mUi", "file_read", {"path": "README.md"}),
    )
    assert [e.call for e in events if isinstance(e, ToolCallEvent)] == list(result.tool_calls)
    assert result.usage.to_obj() == {"inputTokens": 152, "outputTokens": 61,
                                      "cacheReadTokens": 0, "cachedInputTokens": 0}


def test_tool_history_is_replayed_as_tool_messages() -> None:
    call = Part(type="dynamic-tool", toolCallId="call_1", toolName="echo",
                input={"word": "hi"}, state="output-available", output={"ok": True, "text": "hi"})
    unanswered = Part(type="dynamic-tool", toolCallId="call_2", toolName="echo",
                      input={}, state="input-available")
    rows = (
        make_row("user", "say hi", id="u1"),
        make_row("assistant", "Calling.", id="a1", parts=[call]),
        make_row("assistant", None, id="a2", parts=[unanswered]),
        make_row("user", "thanks", id="u2"),
    )
    messages = chat_messages(ProviderRequest("sys", rows, ()))
    assert messages[1:4] == [
        {"role": "user", "content": "say hi"},
        {"role": "assistant", "content": "Calling.", "tool_calls": [{
            "id": "call_1", "type": "function",
            "function": {"name": "echo", "arguments": '{"word": "hi"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": '{"ok":true,"text":"hi"}'},
    ]
    # A call cut off before its result is answered explicitly, so the API accepts the history.
    assert messages[4]["tool_calls"][0]["id"] == "call_2"
    assert messages[5]["role"] == "tool"
    assert messages[5]["tool_call_id"] == "call_2"
    assert "interrupted" in messages[5]["content"]
    assert messages[6] == {"role": "user", "content": "thanks"}


def test_rate_limit_then_success_is_retried_once_honouring_retry_after() -> None:
    replay = Replay(error(429, "openai_rate_limit.json", {"retry-after": "2"}),
                    sse("openai_stream_text.sse"))
    sleeps: list[float] = []
    result = provider(replay, sleeps).step(request())
    assert result.text == "The capital of France is Paris."
    assert len(replay.requests) == 2  # the SDK's own retries are off: one try, one retry
    assert sleeps == [2.0]
    assert replay.bodies()[0] == replay.bodies()[1]


def test_retries_are_bounded_with_exponential_backoff() -> None:
    replay = Replay(*[error(500, "openai_rate_limit.json") for _ in range(3)])
    sleeps: list[float] = []
    with pytest.raises(TransientProviderError, match="gave up after 3 attempts"):
        provider(replay, sleeps).step(request())
    assert len(replay.requests) == 3
    assert sleeps == [1.0, 2.0]


def test_exhausted_quota_is_not_retried() -> None:
    replay = Replay(error(429, "openai_insufficient_quota.json"))
    with pytest.raises(ProviderError, match="quota") as caught:
        provider(replay).step(request())
    assert not isinstance(caught.value, TransientProviderError)
    replay.assert_done()


def test_context_length_exceeded_is_the_engines_overflow() -> None:
    replay = Replay(error(400, "openai_context_length_exceeded.json"))
    with pytest.raises(ContextOverflowError, match="maximum context length"):
        provider(replay).step(request())
    replay.assert_done()


def test_auth_error_names_the_key_to_set() -> None:
    replay = Replay(error(401, "openai_invalid_api_key.json"))
    with pytest.raises(ProviderAuthError, match="set OPENAI_API_KEY") as caught:
        provider(replay).step(request())
    assert caught.value.env_var == "OPENAI_API_KEY"
    replay.assert_done()


def test_missing_key_is_a_usage_error_before_any_request() -> None:
    replay = Replay()
    with pytest.raises(UsageError, match="export OPENAI_API_KEY"):
        provider(replay, env={})
    assert replay.requests == []


def test_fallback_model_gets_the_same_request_after_the_primary_fails() -> None:
    replay = Replay(error(401, "openai_invalid_api_key.json"), sse("openai_stream_text.sse"))
    made = create_provider(
        "openai:gpt-4.1", environ=ENV, http_client=replay.client(),
        settings=Settings().with_value("fallbackModel", "openai:gpt-4o"),
        retry=RetryPolicy(sleep=no_wait),
    )
    assert isinstance(made, FallbackProvider)
    assert made.context_window == 128_000  # the smaller window: the request fits both
    result = made.step(request())
    assert result.text == "The capital of France is Paris."
    first, second = replay.bodies()
    assert (first["model"], second["model"]) == ("gpt-4.1", "gpt-4o")
    assert first["messages"] == second["messages"]
    assert first["tools"] == second["tools"]
    assert made.last_used is made.fallback


def test_context_overflow_does_not_fall_back() -> None:
    replay = Replay(error(400, "openai_context_length_exceeded.json"))
    made = create_provider(
        "openai:gpt-4o", environ=ENV, http_client=replay.client(),
        settings=Settings().with_value("fallbackModel", "openai:gpt-4o-mini"))
    with pytest.raises(ContextOverflowError):
        made.step(request())
    replay.assert_done()


def test_openai_compatible_uses_its_own_url_and_key_never_openais() -> None:
    replay = Replay(sse("openai_plain_text.sse"))
    settings = (Settings().with_value("openai-compatible.baseUrl", "http://localhost:11434/v1")
                .with_value("contextWindow.openai-compatible:qwen2.5-coder:7b", 32_768))
    made = provider(replay, model="openai-compatible:qwen2.5-coder:7b", settings=settings,
                    env={"OPENAI_API_KEY": "sk-secret"})
    assert made.context_window == 32_768
    made.step(request())
    (sent,) = replay.requests
    assert str(sent.url) == "http://localhost:11434/v1/chat/completions"
    assert sent.headers["authorization"] == "Bearer no-key"
    assert json.loads(sent.content)["model"] == "qwen2.5-coder:7b"


def test_openai_compatible_env_overrides_and_key_is_sent() -> None:
    replay = Replay(sse("openai_plain_text.sse"))
    settings = Settings().with_value("contextWindow.openai-compatible:llama3.1", 8192)
    env = {"OPENAI_COMPATIBLE_BASE_URL": "http://127.0.0.1:8000/v1",
           "OPENAI_COMPATIBLE_API_KEY": "local-key"}
    provider(replay, model="openai-compatible:llama3.1", settings=settings, env=env).step(
        request())
    (sent,) = replay.requests
    assert sent.url.host == "127.0.0.1"
    assert sent.headers["authorization"] == "Bearer local-key"


@pytest.mark.parametrize(("model", "settings", "message"), [
    ("openai-compatible:llama3.1", Settings().with_value(
        "openai-compatible.baseUrl", "http://localhost:8080/v1"),
     "the contextWindow.openai-compatible:llama3.1 setting"),
    ("openai-compatible:llama3.1", Settings().with_value(
        "contextWindow.openai-compatible:llama3.1", 8192), "OPENAI_COMPATIBLE_BASE_URL"),
    ("openai:gpt-99", Settings(), "contextWindow.openai:gpt-99"),
])
def test_unknown_window_or_missing_url_is_clear(model: str, settings: Settings,
                                                message: str) -> None:
    with pytest.raises(UsageError, match=message):
        create_provider(model, environ=ENV, settings=settings)


def test_unknown_tokenizer_is_clear() -> None:
    settings = (Settings().with_value("contextWindow.openai-compatible:my-model", 8192)
                .with_value("openai-compatible.baseUrl", "http://localhost:8080/v1"))
    with pytest.raises(UnknownModelError, match=r"encoding\.openai-compatible:my-model"):
        create_provider("openai-compatible:my-model", environ={}, settings=settings)


def test_a_named_encoding_lets_an_unknown_model_run_and_be_counted() -> None:
    """A local fine-tune: the user names the bundled encoding to count it with."""
    settings = (Settings().with_value("contextWindow.openai-compatible:my-model", 8192)
                .with_value("openai-compatible.baseUrl", "http://localhost:8080/v1")
                .with_value("encoding.openai-compatible:my-model", "cl100k_base"))
    made = create_provider("openai-compatible:my-model", environ={}, settings=settings)
    assert made.encoding == "cl100k_base"
    token_model = Session._resolve_token_model(made)
    assert (token_model.encoding, token_model.exact) == ("cl100k_base", True)
    with pytest.raises(UsageError, match=r"must be one of"):
        Settings().with_value("encoding.openai-compatible:my-model", "gpt2")


def test_a_stream_that_breaks_after_text_is_not_retried() -> None:
    broken = (b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-4o",'
              b'"choices":[{"index":0,"delta":{"content":"Par"},"finish_reason":null}]}\n\n'
              b'data: {"error":{"message":"The server had an error while processing your '
              b'request.","type":"server_error","code":null}}\n\n')
    replay = Replay(_stream(broken))
    events: list[Any] = []
    with pytest.raises(TransientProviderError, match="already started streaming"):
        provider(replay).step(request(), on_event=events.append)
    assert events == [TextDelta("Par")]
    replay.assert_done()


def _stream(body: bytes) -> Any:
    import httpx2

    return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body)
