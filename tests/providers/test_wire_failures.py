"""What real servers send when things go wrong, through the real SDKs: overflow bodies of
every server family, a connection dropped mid-reply, a stream without its terminator, long
and short Retry-After, an in-stream error, and a missing SDK."""

from __future__ import annotations

import builtins
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from segue import Provider, ProviderRequest, UsageError, create_provider, make_row
from segue._errors import ContextOverflowError, ProviderError, TransientProviderError
from segue._providers import StreamEvent, TextDelta
from segue._providers.retry import RetryPolicy
from segue._settings import Settings

from .recordings import Recorded, issue_error, issue_errors, recorded
from .replay import Replay

ENV = {"OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": "sk-ant-test",
       "OPENAI_COMPATIBLE_BASE_URL": "http://localhost:8080/v1"}
REQUEST = ProviderRequest("Be brief.", (make_row("user", "hi", id="u1", workspace_id="ws"),))
COMPAT = "openai-compatible:llama-3.3-70b"
SETTINGS = Settings().with_value(f"contextWindow.{COMPAT}", 8192)


def family(key: str) -> str:
    if key.startswith("anthropic"):
        return "anthropic:claude-sonnet-4-5"
    if key.startswith(("openai", "azure")):
        return "openai:gpt-4o"
    return COMPAT  # DeepSeek, vLLM, llama.cpp: OpenAI-compatible servers


def make(replay: Replay, model: str, sleeps: list[float] | None = None,
         settings: Settings = SETTINGS) -> Provider:
    return create_provider(model, environ=ENV, settings=settings, http_client=replay.client(),
                           retry=RetryPolicy(sleep=(sleeps if sleeps is not None else []).append))


OVERFLOWS = sorted(k for k in issue_errors()
                   if any(w in k for w in ("too_long", "exceed", "max_context")))
ANTHROPIC_TEXT = "anthropic__claude-3-opus__text.sse"
OPENAI_TEXT = "openai__gpt-4o__text.sse"


def test_the_overflow_bodies_are_the_ones_the_issue_lists() -> None:
    assert OVERFLOWS == [
        "anthropic_input_plus_max_tokens_exceed_context", "anthropic_prompt_too_long",
        "deepseek_max_context_400", "llamacpp_context_size_exceeded_500",
        "llamacpp_exceed_context_400", "llamacpp_exceed_context_500",
        "openai_context_length_exceeded", "vllm_decoder_prompt_too_long_400",
        "vllm_max_context_400"]


@pytest.mark.parametrize("key", OVERFLOWS)
def test_every_servers_overflow_body_is_a_context_overflow_sent_once(key: str) -> None:
    # One response only: a retry would be an unexpected request and fail the test.
    replay = Replay(issue_error(key).response())
    with pytest.raises(ContextOverflowError):
        make(replay, family(key)).step(REQUEST)
    replay.assert_done()
    assert len(replay.requests) == 1


@pytest.mark.parametrize("key", OVERFLOWS)
def test_an_overflow_never_goes_to_the_fallback_model(key: str) -> None:
    primary = family(key)
    other = "openai:gpt-4o" if primary.startswith("anthropic") else "anthropic:claude-sonnet-4-5"
    replay = Replay(issue_error(key).response())  # nothing left for a fallback request
    with pytest.raises(ContextOverflowError):
        make(replay, primary, settings=SETTINGS.with_value("fallbackModel", other)).step(REQUEST)
    assert len(replay.requests) == 1


@pytest.mark.parametrize(("key", "text"), [("anthropic_overloaded_529", ANTHROPIC_TEXT),
                                           ("anthropic_api_error_500", ANTHROPIC_TEXT),
                                           ("openai_server_error_500", OPENAI_TEXT)])
def test_server_trouble_is_retried(key: str, text: str) -> None:
    sleeps: list[float] = []
    replay = Replay(issue_error(key).response(), recorded(text).response())
    result = make(replay, family(key), sleeps).step(REQUEST)
    assert result.text and sleeps == [1.0]
    replay.assert_done()


def test_a_long_retry_after_fails_at_once_with_the_wait_in_the_message() -> None:
    long = issue_error("azure_openai_429_retry_after")  # Retry-After: 45 (> the 30 s cap)
    assert long.headers["retry-after"] == "45"
    sleeps: list[float] = []
    replay = Replay(long.response())
    with pytest.raises(TransientProviderError) as caught:
        make(replay, "openai:gpt-4o", sleeps).step(REQUEST)
    assert sleeps == [] and len(replay.requests) == 1
    assert "wait 45 s" in caught.value.message and "not retried" in caught.value.message


def test_a_daily_quota_wait_is_said_in_hours() -> None:
    body = issue_error("azure_openai_429_retry_after")
    replay = Replay(Recorded(429, {**body.headers, "retry-after": "30600"}, body.body).response())
    with pytest.raises(TransientProviderError, match=r"wait 8\.5 h"):
        make(replay, "openai:gpt-4o").step(REQUEST)


def test_a_short_retry_after_is_waited_exactly() -> None:
    body = issue_error("azure_openai_429_retry_after")
    short = Recorded(429, {**body.headers, "retry-after": "7"}, body.body)
    sleeps: list[float] = []
    replay = Replay(short.response(), recorded(OPENAI_TEXT).response())
    make(replay, "openai:gpt-4o", sleeps).step(REQUEST)
    assert sleeps == [7.0]


def test_a_long_retry_after_lets_the_fallback_answer() -> None:
    long = issue_error("azure_openai_429_retry_after")
    replay = Replay(long.response(), recorded(ANTHROPIC_TEXT).response())
    made = make(replay, "openai:gpt-4o",
                settings=SETTINGS.with_value("fallbackModel", "anthropic:claude-sonnet-4-5"))
    assert made.step(REQUEST).text == "Hello there!"


def test_an_in_stream_anthropic_error_does_not_read_http_200() -> None:
    data = issue_errors()["anthropic_stream_error_event_overloaded"]["data"]
    stream = f"event: error\ndata: {data}\n\n".encode()
    overloaded = Recorded(200, {"content-type": "text/event-stream"}, stream)
    replay = Replay(*(overloaded.response() for _ in range(3)))
    with pytest.raises(TransientProviderError) as caught:
        make(replay, "anthropic:claude-sonnet-4-5").step(REQUEST)
    replay.assert_done()
    assert "Overloaded" in caught.value.message
    assert "HTTP 200" not in caught.value.message
    assert "inside the reply stream" in caught.value.message


# -- a connection dropped mid-reply ------------------------------------------------------------


def dropped(source: Recorded, after: int) -> httpx2.Response:
    """The recorded stream, with the connection lost after ``after`` bytes."""

    def body() -> Iterator[bytes]:
        yield source.body[:after]
        raise httpx2.ReadError("peer closed connection without sending complete message body")

    return httpx2.Response(source.status, headers=source.headers, content=body())


def _first_text_offset(body: bytes) -> int:
    return body.index(b"text_delta") if b"text_delta" in body else body.index(b'"content":"I')


@pytest.mark.parametrize("text", [ANTHROPIC_TEXT, OPENAI_TEXT])
def test_a_connection_dropped_before_any_output_is_retried(text: str) -> None:
    source = recorded(text)
    model = "anthropic:claude-sonnet-4-5" if text.startswith("anthropic") else "openai:gpt-4o"
    replay = Replay(dropped(source, 40), source.response())
    sleeps: list[float] = []
    events: list[StreamEvent] = []
    result = make(replay, model, sleeps).step(REQUEST, on_event=events.append)
    assert result.text and "".join(e.text for e in events if isinstance(e, TextDelta)) == \
        result.text  # nothing shown twice
    assert sleeps == [1.0]
    replay.assert_done()


@pytest.mark.parametrize("text", [ANTHROPIC_TEXT, OPENAI_TEXT])
def test_a_connection_dropped_after_output_is_a_clear_error_not_a_retry(text: str) -> None:
    source = recorded(text)
    model = "anthropic:claude-sonnet-4-5" if text.startswith("anthropic") else "openai:gpt-4o"
    cut = source.body.index(b"\n\n", _first_text_offset(source.body)) + 2
    replay = Replay(dropped(source, cut))
    events: list[StreamEvent] = []
    with pytest.raises(TransientProviderError) as caught:
        make(replay, model).step(REQUEST, on_event=events.append)
    assert events, "part of the reply was shown before the drop"
    assert "already started streaming" in caught.value.message
    assert len(replay.requests) == 1


def test_a_dropped_connection_is_never_a_raw_httpx_exception_and_the_fallback_answers() -> None:
    source = recorded(ANTHROPIC_TEXT)
    replay = Replay(*(dropped(source, 40) for _ in range(3)), recorded(OPENAI_TEXT).response())
    made = make(replay, "anthropic:claude-sonnet-4-5",
                settings=SETTINGS.with_value("fallbackModel", "openai:gpt-4o"))
    assert made.step(REQUEST).text.startswith("I'm unable to provide real-time weather")
    replay.assert_done()


# -- streams without their terminator ----------------------------------------------------------


def without_terminator(source: Recorded, marker: bytes) -> Recorded:
    return Recorded(source.status, source.headers, source.body[:source.body.index(marker)])


@pytest.mark.parametrize(("text", "marker"), [
    (ANTHROPIC_TEXT, b"event: message_delta"),  # no stop reason, no message_stop
    (ANTHROPIC_TEXT, b"event: message_stop"),
    (OPENAI_TEXT, b'{"id":"chatcmpl-ABfw031mOJeYCSHe4yI2ZjOA6kMJL","object":"chat.completion.'
                  b'chunk","created":1727346168,"model":"gpt-4o-2024-08-06","system_fingerprint'
                  b'":"fp_5050236cbd","choices":[{"index":0,"delta":{},"logprobs":null,"finish_'
                  b'reason":"stop"}]'),
])
def test_a_stream_that_stops_without_its_terminator_is_an_error(text: str, marker: bytes) -> None:
    source = recorded(text)
    model = "anthropic:claude-sonnet-4-5" if text.startswith("anthropic") else "openai:gpt-4o"
    cut = without_terminator(source, marker)
    # Before output is shown it is retried; here the reply had started, so: a clear error.
    replay = Replay(cut.response())
    with pytest.raises(TransientProviderError, match="ended before"):
        make(replay, model).step(REQUEST)
    assert len(replay.requests) == 1


def test_a_stream_without_terminator_and_without_output_is_retried() -> None:
    source = recorded(ANTHROPIC_TEXT)
    cut = without_terminator(source, b"event: content_block_start")
    sleeps: list[float] = []
    replay = Replay(cut.response(), source.response())
    assert make(replay, "anthropic:claude-sonnet-4-5", sleeps).step(REQUEST).text == \
        "Hello there!"
    assert sleeps == [1.0]


# -- install hints -----------------------------------------------------------------------------


@pytest.mark.parametrize(("model", "extra"), [("openai:gpt-4o", "openai"),
                                              ("anthropic:claude-sonnet-4-5", "anthropic")])
def test_a_missing_sdk_names_this_projects_extra_both_ways(
        monkeypatch: pytest.MonkeyPatch, model: str, extra: str) -> None:
    real_import = builtins.__import__

    def no_sdk(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == extra:
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_sdk)
    with pytest.raises(UsageError) as caught:
        create_provider(model, environ=ENV)
    message = caught.value.message
    assert f"from a checkout: pip install -e '.[{extra}]'" in message
    assert f"from a release: pip install 'segue[{extra}]'" in message
    assert f"pip install {extra}" not in message  # never a bare, possibly foreign, package
    assert "\n" not in message


def test_the_overflow_that_arrives_as_http_500_is_not_retried_as_a_server_error() -> None:
    replay = Replay(issue_error("llamacpp_exceed_context_500").response())
    with pytest.raises(ProviderError) as caught:
        make(replay, COMPAT).step(REQUEST)
    assert isinstance(caught.value, ContextOverflowError)
    assert "does not fit" in caught.value.message


def test_openrouters_recorded_429s_are_retried_then_reported() -> None:
    name = "openrouter__gemini-2.0-flash__429s.yaml"
    sleeps: list[float] = []
    replay = Replay(*(recorded(name, i).response() for i in range(3)))
    with pytest.raises(TransientProviderError) as caught:
        make(replay, COMPAT, sleeps).step(REQUEST)
    assert "gave up after 3 attempts" in caught.value.message
    assert "HTTP 429" in caught.value.message
    assert sleeps == [1.0, 2.0]
    replay.assert_done()
