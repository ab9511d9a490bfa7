"""``openai-responses:`` (OpenAI's Responses API) through the real SDK on recorded streams:
function calls, encrypted reasoning carried to the next request (``store: false``), usage,
the request shape, and the same overflow / retry / fallback rules as the other adapters."""

from __future__ import annotations

from pathlib import Path

import pytest

from segue import Part, ProviderRequest, create_provider, make_row
from segue._errors import ContextOverflowError, TransientProviderError
from segue._providers.anthropic_messages import anthropic_messages
from segue._providers.openai_chat import OpenAIChatProvider, prompt_cache_key
from segue._providers.openai_responses import OpenAIResponsesProvider
from segue._providers.request import reasoning_part
from segue._providers.retry import RetryPolicy

from .recordings import Recorded, issue_error, recorded
from .replay import Replay, no_wait
from .test_engine_wire import Rig

ENV = {"OPENAI_API_KEY": "sk-test"}
TOOL_CALL = "openai-responses__gpt-5.1__tool_call.chunks.txt"
REASONING = "openai-responses__gpt-5.1-codex-max__reasoning_then_tool_call.chunks.txt"
CALC = {"name": "calculator", "description": "Arithmetic.",
        "input_schema": {"type": "object", "properties": {"a": {"type": "number"}}}}
REQUEST = ProviderRequest("Be brief.", (make_row("user", "12+7?", id="u1", workspace_id="ws"),),
                          (CALC,))


def make(replay: Replay, model: str = "openai-responses:gpt-5.1") -> OpenAIResponsesProvider:
    made = create_provider(model, environ=ENV, http_client=replay.client(),
                           retry=RetryPolicy(sleep=no_wait))
    assert isinstance(made, OpenAIResponsesProvider)
    return made


def test_the_request_is_a_stateless_responses_call() -> None:
    replay = Replay(recorded(TOOL_CALL).response())
    make(replay).step(REQUEST)
    (sent,) = replay.requests
    assert sent.url.path == "/v1/responses"
    body = replay.bodies()[0]
    assert body["model"] == "gpt-5.1" and body["stream"] is True
    assert body["store"] is False
    assert body["include"] == ["reasoning.encrypted_content"]
    assert body["instructions"] == "Be brief."
    assert body["input"] == [{"role": "user",
                              "content": [{"type": "input_text", "text": "12+7?"}]}]
    assert body["tools"] == [{"type": "function", "name": "calculator",
                              "description": "Arithmetic.",
                              "parameters": CALC["input_schema"]}]
    assert body["prompt_cache_key"] == prompt_cache_key(REQUEST)


def test_a_model_without_reasoning_is_not_asked_for_encrypted_reasoning() -> None:
    replay = Replay(recorded(TOOL_CALL).response())
    make(replay, "openai-responses:gpt-4o").step(REQUEST)
    assert "include" not in replay.bodies()[0]


def test_openai_models_served_only_by_the_responses_api_use_it() -> None:
    assert isinstance(make(Replay(), "openai:o3-pro"), OpenAIResponsesProvider)
    assert isinstance(make(Replay(), "openai:gpt-5-codex"), OpenAIResponsesProvider)
    chat = create_provider("openai:gpt-5", environ=ENV)
    assert isinstance(chat, OpenAIChatProvider)


def test_the_encrypted_reasoning_item_is_kept_with_its_summary() -> None:
    result = make(Replay(recorded(REASONING).response())).step(REQUEST)
    (item,) = result.reasoning
    assert item.item_id == "rs_01830d662ab3856501693c321405c88190be3ab04d5782d5f9"
    assert item.encrypted_content.startswith("gAAAAABpPDIVOKrs")
    assert item.summary.startswith("**Calculating step-by-step using calculator**")


def test_reasoning_is_stored_and_sent_back_on_the_next_request(tmp_path: Path) -> None:
    # The second request meets an overflow (recorded OpenAI body): the turn pauses cleanly,
    # and what that request carried is what matters here.
    replay = Replay(recorded(REASONING).response(),
                    issue_error("openai_context_length_exceeded").response())
    rig = Rig(tmp_path, "openai-responses:gpt-5.1", replay, experiment=False)
    result = rig.session.send("12+7, then times 3")
    assert result.status == "paused"
    reply = next(r for r in rig.rows() if r.role == "assistant")
    assert [p.type for p in reply.parts] == ["reasoning", "dynamic-tool"]
    meta = reply.parts[0].extra["providerMetadata"]["openai"]
    assert meta["itemId"] == "rs_01830d662ab3856501693c321405c88190be3ab04d5782d5f9"
    second = replay.bodies()[1]["input"]
    kinds = [i.get("type", i.get("role")) for i in second]
    assert kinds == ["user", "reasoning", "function_call", "function_call_output"]
    assert second[1]["encrypted_content"] == meta["reasoningEncryptedContent"]
    assert second[2]["call_id"] == second[3]["call_id"] == "call_AB6AaRZ1FYZB2RwS6A5vbdqn"
    assert replay.bodies()[1]["store"] is False


def test_reasoning_parts_are_never_sent_to_chat_completions_or_anthropic() -> None:
    replay = Replay(recorded(REASONING).response(), recorded("openai__gpt-4o__text.sse")
                    .response())
    first = make(replay).step(REQUEST)
    row = make_row("assistant", id="a1", parts=[reasoning_part(first.reasoning[0]),
                                               Part(type="text", text="ok", state="done")])
    request = ProviderRequest("s", (make_row("user", "hi", id="u1"), row,
                                    make_row("user", "go on", id="u2")))
    chat = create_provider("openai:gpt-4o", environ=ENV, http_client=replay.client())
    chat.step(request)
    assert replay.bodies()[1]["messages"][2] == {"role": "assistant", "content": "ok"}
    assert anthropic_messages(request)[1] == {"role": "assistant",
                                              "content": [{"type": "text", "text": "ok"}]}


def test_overflow_is_the_engines_and_is_sent_once() -> None:
    replay = Replay(issue_error("openai_context_length_exceeded").response())
    with pytest.raises(ContextOverflowError):
        make(replay).step(REQUEST)
    assert len(replay.requests) == 1


def test_server_errors_and_dropped_streams_are_retried() -> None:
    source = recorded(TOOL_CALL)
    cut = Recorded(source.status, source.headers,
                   source.body[:source.body.index(b'data: {"type":"response.completed"')])
    replay = Replay(issue_error("openai_server_error_500").response(), cut.response(),
                    source.response())
    result = make(replay).step(REQUEST)
    assert result.tool_calls[0].input == {"city": "Beijing"}
    replay.assert_done()


def test_a_stream_without_response_completed_is_an_error() -> None:
    source = recorded(TOOL_CALL)
    cut = Recorded(source.status, source.headers,
                   source.body[:source.body.index(b'data: {"type":"response.completed"')])
    replay = Replay(*(cut.response() for _ in range(3)))
    with pytest.raises(TransientProviderError, match=r"response\.completed"):
        make(replay).step(REQUEST)


def _incomplete_after(marker: bytes, reason: str) -> Recorded:
    """The recorded tool-call stream cut before ``marker``, ended the way the API ends a
    reply at a limit: its own ``response.completed`` line turned into
    ``response.incomplete`` (status and reason changed, nothing else)."""
    source = recorded(TOOL_CALL)
    body = source.body
    done = body[body.index(b'data: {"type":"response.completed"'):]
    ended = (done.replace(b'"type":"response.completed"', b'"type":"response.incomplete"', 1)
             .replace(b'"status":"completed","background"',
                      b'"status":"incomplete","background"', 1)
             .replace(b'"incomplete_details":null',
                      b'"incomplete_details":{"reason":"' + reason.encode() + b'"}', 1))
    return Recorded(source.status, source.headers, body[:body.index(marker)] + ended)


def test_a_reply_cut_at_max_output_tokens_inside_a_call_never_yields_the_call() -> None:
    cut = _incomplete_after(b'data: {"type":"response.function_call_arguments.done"',
                            "max_output_tokens")
    result = make(Replay(cut.response())).step(REQUEST)
    assert result.finish_reason == "length"
    assert result.truncated_call == "get_weather"
    assert result.tool_calls == ()


def test_a_content_filter_stop_is_reported_as_such() -> None:
    cut = _incomplete_after(b'data: {"type":"response.output_item.added"', "content_filter")
    result = make(Replay(cut.response())).step(REQUEST)
    assert (result.finish_reason, result.truncated_call, result.text) == (
        "content-filter", None, "")
