"""End to end with the engine: a real Session over the real SDKs on recorded traffic.

* an overflow body from each server family → one emergency rollover (experiment on) or a
  clean pause (off); never a retry loop, never the fallback model;
* a reply cut at the output limit: inside text it is continued once with the synthetic
  continuation, inside a tool call the turn stops and the cut call never runs; the finish
  reason is kept in the row's metadata (``finishReason``, as Xum stores it).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from segue import (
    Event,
    HistoryStore,
    Layout,
    ProviderRequest,
    RolledOver,
    Session,
    SessionConfig,
    StepResult,
    create_provider,
    resolve_agent,
)
from segue._providers import EventSink
from segue._providers.fallback import FallbackProvider
from segue._providers.retry import RetryPolicy
from segue._settings import Settings
from segue._tools.base import FunctionTool, ToolRegistry
from tests.front import is_rollover_boundary

from .recordings import issue_error, recorded
from .replay import Replay, no_wait

ENV = {"OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": "sk-ant-test",
       "OPENAI_COMPATIBLE_BASE_URL": "http://localhost:8080/v1"}
COMPAT = "openai-compatible:llama-3.3-70b"
ANTHROPIC_TEXT = "anthropic__claude-3-opus__text.sse"
OPENAI_TEXT = "openai__gpt-4o__text.sse"


class Tripwire:
    """A fallback model that must never be asked."""

    model = "openai:gpt-4o-mini"
    context_window = 1_000_000
    encoding = "o200k_base"

    def __init__(self) -> None:
        self.asked = 0

    def step(self, request: ProviderRequest, *, on_event: EventSink | None = None
             ) -> StepResult:
        self.asked += 1
        raise AssertionError("the fallback model was asked")


class Rig:
    def __init__(self, tmp_path: Path, model: str, replay: Replay, *, experiment: bool) -> None:
        self.layout = Layout(tmp_path / "home", "ws")
        (tmp_path / "work").mkdir(exist_ok=True)
        self.replay = replay
        self.ran: list[Mapping[str, Any]] = []
        settings = Settings().with_value(f"contextWindow.{COMPAT}", 131_072)
        primary = create_provider(model, environ=ENV, settings=settings,
                                  http_client=replay.client(), retry=RetryPolicy(sleep=no_wait))
        self.fallback = Tripwire()
        self.events: list[Event] = []

        def make_file(args: Mapping[str, Any]) -> Any:
            self.ran.append(args)
            return {"ok": True}

        self.session = Session(
            self.layout, HistoryStore(self.layout, durable=False),
            FallbackProvider(primary, self.fallback),
            agent=resolve_agent("exec", tmp_path / "work"),
            tools=ToolRegistry((FunctionTool(
                "make_file", "Write a file.",
                {"type": "object", "properties": {"filename": {"type": "string"}}},
                make_file),)),
            config=SessionConfig(experiment=experiment, threshold=70),
            on_event=self.events.append,
        )

    def rows(self) -> list[Any]:
        return list(self.session.store.rows())


def family(key: str) -> tuple[str, str]:
    """(model, a recorded text reply of that family)."""
    if key.startswith("anthropic"):
        return "anthropic:claude-sonnet-4-5", ANTHROPIC_TEXT
    if key.startswith("openai"):
        return "openai:gpt-4o", OPENAI_TEXT
    return COMPAT, OPENAI_TEXT


FAMILIES = ["anthropic_prompt_too_long", "anthropic_input_plus_max_tokens_exceed_context",
            "openai_context_length_exceeded", "deepseek_max_context_400",
            "vllm_decoder_prompt_too_long_400", "vllm_max_context_400",
            "llamacpp_exceed_context_400", "llamacpp_exceed_context_500",
            "llamacpp_context_size_exceeded_500"]


@pytest.mark.parametrize("key", FAMILIES)
def test_an_overflow_rolls_over_once_when_the_experiment_is_on(tmp_path: Path, key: str
                                                               ) -> None:
    model, text = family(key)
    replay = Replay(recorded(text).response(), issue_error(key).response(),
                    recorded(text).response())
    rig = Rig(tmp_path, model, replay, experiment=True)
    assert rig.session.send("earlier work").status == "completed"
    result = rig.session.send("please continue")
    assert result.status == "completed", result.reason
    assert result.rollovers == 1
    assert [e.reason for e in rig.events if isinstance(e, RolledOver)] == ["context-exceeded"]
    (boundary,) = [r for r in rig.rows() if is_rollover_boundary(r)]
    assert boundary.metadata["muxMetadata"]["reason"] == "context-exceeded"
    replay.assert_done()  # exactly three requests: no retry of the overflow
    assert rig.fallback.asked == 0


@pytest.mark.parametrize("key", FAMILIES)
def test_an_overflow_pauses_cleanly_when_the_experiment_is_off(tmp_path: Path, key: str
                                                               ) -> None:
    model, text = family(key)
    replay = Replay(recorded(text).response(), issue_error(key).response())
    rig = Rig(tmp_path, model, replay, experiment=False)
    rig.session.send("earlier work")
    result = rig.session.send("please continue")
    assert result.status == "paused"
    assert result.reason is not None and "too large" in result.reason
    assert result.rollovers == 0
    replay.assert_done()
    assert rig.fallback.asked == 0
    assert [r.role for r in rig.rows()] == ["user", "assistant", "user"]


# -- replies cut at the output limit ----------------------------------------------------------


def test_a_reply_cut_inside_text_is_continued_once(tmp_path: Path) -> None:
    replay = Replay(recorded("openai__gpt-4o__finish_length.sse").response(),
                    recorded(OPENAI_TEXT).response())
    rig = Rig(tmp_path, "openai:gpt-4o", replay, experiment=True)
    result = rig.session.send("write a long answer")
    assert result.status == "completed", result.reason
    replay.assert_done()
    rows = rig.rows()
    assert [r.role for r in rows] == ["user", "assistant", "user", "assistant"]
    cut, continuation, done = rows[1], rows[2], rows[3]
    assert cut.metadata["finishReason"] == "length" and cut.text == '{"'
    assert continuation.flag("synthetic") and continuation.metadata["uiVisible"] is False
    assert done.metadata["finishReason"] == "stop"
    second = replay.bodies()[1]["messages"]
    assert second[-2] == {"role": "assistant", "content": '{"'}
    assert second[-1]["role"] == "user" and second[-1]["content"] == continuation.text


def test_a_second_cut_in_the_same_turn_stops_with_a_reason(tmp_path: Path) -> None:
    cut = recorded("openai__gpt-4o__finish_length.sse")
    replay = Replay(cut.response(), cut.response())
    rig = Rig(tmp_path, "openai:gpt-4o", replay, experiment=True)
    result = rig.session.send("write a long answer")
    assert result.status == "paused"
    assert result.reason is not None and "output limit" in result.reason
    replay.assert_done()  # one continuation, not a loop
    assert [r.metadata.get("finishReason") for r in rig.rows() if r.role == "assistant"] == [
        "length", "length"]


def test_a_reply_cut_inside_a_tool_call_stops_and_the_call_never_runs(tmp_path: Path) -> None:
    replay = Replay(recorded("anthropic__claude-3-7-sonnet__max_tokens_inside_tool_use.sse")
                    .response())
    rig = Rig(tmp_path, "anthropic:claude-sonnet-4-5", replay, experiment=True)
    result = rig.session.send("write my tax guide to taxes.txt")
    assert result.status == "paused"
    assert result.reason is not None
    assert "make_file" in result.reason and "not run" in result.reason
    assert rig.ran == []
    replay.assert_done()
    rows = rig.rows()
    assert [r.role for r in rows] == ["user", "assistant"]
    assert rows[1].metadata["finishReason"] == "length"
    assert rows[1].text.startswith("I'll create a comprehensive tax guide")
    assert not any(p.type == "dynamic-tool" for p in rows[1].parts)


def test_the_finish_reason_and_cache_usage_are_kept_on_every_reply(tmp_path: Path) -> None:
    replay = Replay(recorded("anthropic__claude-sonnet-4__text_then_tool_use.sse").response(),
                    recorded(ANTHROPIC_TEXT).response())
    rig = Rig(tmp_path, "anthropic:claude-sonnet-4-5", replay, experiment=True)
    # The recorded call is get_weather, which this session does not have: it is answered
    # with an error result, and the turn goes on.
    result = rig.session.send("weather in Paris?")
    assert result.status == "completed"
    replies = [r for r in rig.rows() if r.role == "assistant"]
    assert [r.metadata["finishReason"] for r in replies] == ["tool-calls", "stop"]
    assert replies[0].metadata["usage"]["cacheWriteTokens"] == 0
    assert result.usage is not None and result.usage["inputTokens"] == 377 + 11
