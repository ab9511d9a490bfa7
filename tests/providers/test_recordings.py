"""Every recording in tests/providers/data replayed through the real SDKs (httpx mock
transport, sockets blocked): text, tool calls with complete arguments, parallel calls kept
apart, usage, finish reason — whole, and delivered in 1-, 5- and 4096-byte reads."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from segue import Provider, ProviderRequest, StepResult, create_provider, make_row
from segue._errors import ProviderError
from segue._providers.retry import RetryPolicy

from .recordings import interactions, recorded
from .replay import Replay

ENV = {"OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": "sk-ant-test"}
REQUEST = ProviderRequest("Be brief.", (make_row("user", "hi", id="u1", workspace_id="ws"),))


def provider(replay: Replay, name: str) -> Provider:
    model = ("anthropic:claude-sonnet-4-5" if name.startswith("anthropic__")
             else "openai-responses:gpt-5.1" if name.startswith("openai-responses__")
             else "openai:gpt-4o")
    return create_provider(model, environ=ENV, http_client=replay.client(),
                           retry=RetryPolicy(attempts=1, sleep=lambda _s: None))


def replayed(name: str, index: int = 0, piece: int | None = None) -> StepResult:
    replay = Replay(recorded(name, index).response(piece))
    result = provider(replay, name).step(REQUEST)
    replay.assert_done()
    return result


@dataclass(frozen=True)
class Expect:
    name: str
    index: int
    head: str  # how the text starts ("" for none)
    length: int  # its length in characters
    calls: tuple[tuple[str, str, dict[str, Any]], ...]  # (id, name, input)
    usage: dict[str, int]
    finish: str | None
    truncated: str | None = None


def _u(inp: int, out: int, read: int | None = None, write: int | None = None
       ) -> dict[str, int]:
    usage = {"inputTokens": inp, "outputTokens": out}
    if read is not None:
        usage |= {"cacheReadTokens": read, "cachedInputTokens": read}
    if write is not None:
        usage["cacheWriteTokens"] = write
    return usage


PELICAN = "pelican_name_generator"
EXPECTED = (
    # A reply cut by max_tokens inside a tool_use block: the text is kept, the call never
    # becomes one to run.
    Expect("anthropic__claude-3-7-sonnet__max_tokens_inside_tool_use.sse", 0,
           "I'll create a comprehensive tax guide", 135, (), _u(450, 124, 0, 0), "length",
           "make_file"),
    Expect("anthropic__claude-3-opus__text.sse", 0, "Hello there!", 12, (), _u(11, 6), "stop"),
    Expect("anthropic__claude-haiku-4-5__parallel_tool_use_then_text.yaml", 0, "", 0,
           (("toolu_01LtHJmixrs9NcWQkK8hu8hj", PELICAN, {}),
            ("toolu_01N8a4jWyf116qKTMqKKmjyt", PELICAN, {})), _u(542, 62, 0, 0), "tool-calls"),
    Expect("anthropic__claude-haiku-4-5__parallel_tool_use_then_text.yaml", 1,
           "Here are two great names", 299, (), _u(678, 82, 0, 0), "stop"),
    Expect("anthropic__claude-haiku-4-5__single_tool_use.yaml", 0, "", 0,
           (("toolu_01CzN6riCPqw4pVSuTd9Dwn7", PELICAN, {}),), _u(543, 40, 0, 0), "tool-calls"),
    Expect("anthropic__claude-sonnet-4__text_then_tool_use.sse", 0,
           "I'll check the current weather in Paris for you.", 48,
           (("toolu_01NRLabsLyVHZPKxbKvkfSMn", "get_weather", {"location": "Paris"}),),
           _u(377, 65, 0, 0), "tool-calls"),
    # Thinking blocks are neither shown nor kept; the answer after them is.
    Expect("anthropic__claude-sonnet-4__thinking_then_text.yaml", 0,
           "Here are the basic steps for safely crossing", 1021, (), _u(43, 282, 0, 0), "stop"),
    Expect("dashscope__qwen3-max__tool_call.chunks.txt", 0, "", 0,
           (("call_eee11723464a4b9eb8cee71d", "weather", {"location": "San Francisco"}),),
           _u(295, 22, 0), "tool-calls"),
    Expect("deepseek__deepseek-reasoner__tool_call.chunks.txt", 0, "", 0,
           (("call_00_ioIn7yN9p1ZOMNpDLwd4MgAF", "weather", {"location": "San Francisco"}),),
           _u(339, 83, 320), "tool-calls"),
    Expect("groq__gpt-oss-120b__error_event_then_tool_call.yaml", 1, "", 0,
           (("fc_bfb39741-3748-4def-9886-a93fc9c64a90", "get_something_by_name",
             {"name": "example"}),), _u(304, 49), "tool-calls"),
    Expect("groq__gpt-oss-120b__error_event_then_tool_call.yaml", 2,
           "The tool returned the expected result", 57, (), _u(339, 58), "stop"),
    # Anthropic's OpenAI-compatible endpoint numbers its first tool call 1, sends no usage.
    Expect("openai-compatible__anthropic-compat-endpoint__tool_call_index_1.sse", 0,
           "Reading it.", 11, (("toolu_sanitized", "read_file", {"path": "a.txt"}),), {},
           "tool-calls"),
    # The Responses API: arguments in deltas, taken whole from output_item.done.
    Expect("openai-responses__gpt-5.1__tool_call.chunks.txt", 0, "", 0,
           (("call_2FQdm3Br7Qb35YUBSkDR7kue", "get_weather", {"city": "Beijing"}),),
           _u(45, 25, 0, 0), "tool-calls"),  # this recording reports cache_write_tokens
    Expect("openai-responses__gpt-5.1-codex-max__reasoning_then_tool_call.chunks.txt", 0, "",
           0, (("call_AB6AaRZ1FYZB2RwS6A5vbdqn", "calculator", {"a": 12, "b": 7, "op": "add"}),),
           _u(134, 28, 0), "tool-calls"),
    Expect("openai__gpt-4o-mini__tool_call_then_text.yaml", 0, "", 0,
           (("call_ZR5UUuTt3pf61kjwAJIYdVMj", "get_capital", {"country": "UK"}),),
           _u(53, 15, 0), "tool-calls"),
    Expect("openai__gpt-4o-mini__tool_call_then_text.yaml", 1,
           "The capital of the UK is London.", 32, (), _u(78, 9, 0), "stop"),
    Expect("openai__gpt-4o__finish_length.sse", 0, '{"', 2, (), _u(79, 1), "length"),
    Expect("openai__gpt-4o__parallel_tool_calls.sse", 0, "", 0,
           (("call_JMW1whyEaYG438VE1OIflxA2", "GetWeatherArgs",
             {"city": "Edinburgh", "country": "GB", "units": "c"}),
            ("call_DNYTawLBoN8fj3KN6qU9N1Ou", "get_stock_price",
             {"ticker": "AAPL", "exchange": "NASDAQ"})), _u(149, 60), "tool-calls"),
    Expect("openai__gpt-4o__text.sse", 0, "I'm unable to provide real-time weather", 159, (),
           _u(14, 30), "stop"),
    # n=3 answers; choice 0 is the one asked for.
    Expect("openai__gpt-4o__three_choices.sse", 0, '{"city":"San Francisco"', 53, (),
           _u(79, 42), "stop"),
    # Kimi through OpenRouter: no finish_reason on the tool call, but the usage chunk ends it.
    Expect("openrouter__kimi-k2__tool_call_variant_a.yaml", 0, "", 0,
           (("0", "llm_version", {}),), _u(57, 17, 0), None),
    Expect("openrouter__kimi-k2__tool_call_variant_a.yaml", 1,
           "The current version of *llm*", 52, (), _u(107, 15, 0), "stop"),
    Expect("openrouter__kimi-k2__tool_call_variant_b.yaml", 0, "", 0,
           (("0", "llm_version", {}),), _u(57, 17, 0), None),
    Expect("openrouter__kimi-k2__tool_call_variant_b.yaml", 1,
           "The current version of *llm*", 52, (), _u(107, 15, 0), "stop"),
    Expect("openrouter__kimi-k2__tool_call_variant_c.yaml", 0, "", 0,
           (("llm_version:0", "llm_version", {}),), _u(56, 12, 0), "tool-calls"),
    Expect("openrouter__kimi-k2__tool_call_variant_c.yaml", 1,
           "The installed version of LLM", 63, (), _u(105, 16, 0), "stop"),
    Expect("snowflake-cortex__claude-sonnet-4-6__text.yaml", 0, "4", 1, (), _u(22, 5, 0), None),
    Expect("vllm-crusoe__llama-3.3-70b__text.yaml", 0, "1, 2, 3, 4, 5", 13, (),
           _u(46, 14, 0), "stop"),
    # xAI: completion_tokens (26) leave out the 227 reasoning tokens (total 560 says so).
    Expect("xai__grok-3-mini__tool_call.chunks.txt", 0, "", 0,
           (("call_79382389", "weather", {"location": "San Francisco"}),),
           _u(307, 26 + 227, 306), "tool-calls"),
    Expect("zai__glm__incremental_tool_call.chunks.txt", 0, "", 0,
           (("chatcmpl-tool-9f149c74c42f265b", "webSearchTool",
             {"query": "current Berlin weather"}),), _u(171, 14, 128), "tool-calls"),
)


def _check(result: StepResult, want: Expect) -> None:
    assert result.text.startswith(want.head)
    assert len(result.text) == want.length
    assert [(c.id, c.name, dict(c.input)) for c in result.tool_calls] == list(want.calls)
    assert result.usage.to_obj() == want.usage
    assert result.finish_reason == want.finish
    assert result.truncated_call == want.truncated


@pytest.mark.parametrize("want", EXPECTED, ids=lambda e: f"{e.name}#{e.index}")
def test_every_supported_recording_replays(want: Expect) -> None:
    _check(replayed(want.name, want.index), want)


#: Eight streams of different servers and shapes (split arguments, parallel calls, a cut,
#: gzip, encrypted reasoning).
EIGHT = ("anthropic__claude-3-7-sonnet__max_tokens_inside_tool_use.sse",
         "anthropic__claude-haiku-4-5__parallel_tool_use_then_text.yaml",
         "anthropic__claude-sonnet-4__text_then_tool_use.sse",
         "deepseek__deepseek-reasoner__tool_call.chunks.txt",
         "openai-compatible__anthropic-compat-endpoint__tool_call_index_1.sse",
         "openai-responses__gpt-5.1-codex-max__reasoning_then_tool_call.chunks.txt",
         "openai__gpt-4o__parallel_tool_calls.sse",
         "zai__glm__incremental_tool_call.chunks.txt")


@pytest.mark.parametrize("piece", [1, 5, 4096])
@pytest.mark.parametrize("name", EIGHT)
def test_the_same_stream_in_any_size_of_reads_gives_the_same_result(
        name: str, piece: int) -> None:
    want = next(e for e in EXPECTED if e.name == name and e.index == 0)
    whole = replayed(want.name, want.index)
    assert replayed(want.name, want.index, piece) == whole
    _check(whole, want)


def test_every_recording_is_covered() -> None:
    """Each stream is either expected above or one of the failures tested on its own."""
    failures = {("groq__gpt-oss-120b__error_event_then_tool_call.yaml", 0),
                ("openrouter__minimax-m2__comments_reasoning_error_chunk.yaml", 0),
                ("openrouter__gemini-2.0-flash__429s.yaml", 0),
                ("openrouter__gemini-2.0-flash__429s.yaml", 1),
                ("openrouter__gemini-2.0-flash__429s.yaml", 2)}
    from .recordings import DATA

    every = {(p.name, i) for p in DATA.iterdir()
             if p.suffix in (".sse", ".yaml", ".txt") and not p.name.startswith("errors__")
             for i in range(len(interactions(p.name)))}
    assert every == {(e.name, e.index) for e in EXPECTED} | failures


def test_an_error_event_inside_a_200_stream_is_a_provider_error_in_the_servers_words() -> None:
    with pytest.raises(ProviderError) as caught:
        replayed("groq__gpt-oss-120b__error_event_then_tool_call.yaml", 0)
    assert "Tool call validation failed" in caught.value.message
    assert "HTTP 200" not in caught.value.message


def test_an_error_chunk_after_reasoning_and_sse_comments_is_a_provider_error() -> None:
    with pytest.raises(ProviderError) as caught:
        replayed("openrouter__minimax-m2__comments_reasoning_error_chunk.yaml", 0)
    assert "Token limit reached" in caught.value.message
    assert "inside the reply stream" in caught.value.message
