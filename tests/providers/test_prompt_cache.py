"""Prompt caching: the request shapes the adapters send (Anthropic ``cache_control``
breakpoints, OpenAI ``prompt_cache_key``), the cache usage they map from recorded bodies, and
where a user sees it (the meter line, ``run --json``, the rollover line)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from segue import Part, ProviderRequest, RolledOver, StepUsage, create_provider, make_row
from segue._providers.anthropic_messages import MAX_BREAKPOINTS, cache_breakpoints, request_params
from segue._providers.openai_chat import prompt_cache_key
from segue._providers.retry import RetryPolicy
from segue._render.lines import NEW_PREFIX_NOTE
from segue._render.terminal import Renderer
from segue._settings import Settings
from segue._tui.lines import usage_meter

from .recordings import recorded
from .replay import Replay, no_wait, sse
from .test_engine_wire import Rig

ECHO = {"name": "echo", "description": "Repeat a word.",
        "input_schema": {"type": "object", "properties": {"word": {"type": "string"}}}}


def marks(body: dict[str, Any]) -> list[str]:
    """Where the breakpoints are, as ``system`` / ``tool`` / ``messages[i][j]``."""
    out = [f"tool:{t['name']}" for t in body.get("tools", []) if "cache_control" in t]
    system = body.get("system")
    if isinstance(system, list):
        out += ["system" for b in system if "cache_control" in b]
    for i, message in enumerate(body["messages"]):
        content = message["content"]
        if isinstance(content, list):
            out += [f"messages[{i}][{j}]" for j, b in enumerate(content) if "cache_control" in b]
    return out


def plain(blocks: list[Any]) -> list[Any]:
    return [{k: v for k, v in b.items() if k != "cache_control"} for b in blocks]


def test_a_turns_requests_put_breakpoints_where_the_next_request_reuses_them(
        tmp_path: Path) -> None:
    replay = Replay(recorded("anthropic__claude-sonnet-4__text_then_tool_use.sse").response(),
                    recorded("anthropic__claude-3-opus__text.sse").response())
    rig = Rig(tmp_path, "anthropic:claude-sonnet-4-5", replay, experiment=True)
    assert rig.session.send("weather in Paris?").status == "completed"
    first, second = replay.bodies()
    last_tool = f"tool:{first['tools'][-1]['name']}"
    assert marks(first) == [last_tool, "system", "messages[0][0]"]
    # Second step: the tools, the system prefix, the new end, and where the first ended.
    assert marks(second) == [last_tool, "system", "messages[0][0]", "messages[2][0]"]
    assert len(marks(second)) <= MAX_BREAKPOINTS
    # The first request's messages are the start of the second's, byte for byte: what was
    # written at its breakpoint is read back.
    assert [plain(m["content"]) for m in first["messages"]] == [
        plain(m["content"]) for m in second["messages"][:len(first["messages"])]]
    assert first["system"] == second["system"] and first["tools"] == second["tools"]


def test_without_system_text_the_tools_carry_the_prefix_breakpoint() -> None:
    request = ProviderRequest("", (make_row("user", "hi", id="u1"),), (ECHO,))
    params = request_params(request, "claude-sonnet-4-5", 8192, cache=True)
    assert "system" not in params
    assert marks(params) == ["tool:echo", "messages[0][0]"]


def test_never_more_than_four_breakpoints_and_none_without_caching() -> None:
    rows = []
    for n in range(12):
        rows.append(make_row("user", f"step {n}", id=f"u{n}"))
        rows.append(make_row("assistant", id=f"a{n}", parts=[
            Part(type="text", text=f"calling {n}", state="done"),
            Part(type="dynamic-tool", toolCallId=f"c{n}", toolName="echo", input={"word": "x"},
                 state="output-available", output={"ok": True})]))
    rows.append(make_row("user", "last", id="last"))
    request = ProviderRequest("sys", tuple(rows), (ECHO,))
    params = request_params(request, "claude-sonnet-4-5", 8192, cache=True)
    assert len(marks(params)) == 4 == MAX_BREAKPOINTS
    assert cache_breakpoints(params) == 0  # idempotent: nothing is marked twice
    bare = request_params(request, "claude-sonnet-4-5", 8192, cache=False)
    assert marks(bare) == [] and bare["system"] == "sys"
    assert "cache_control" not in json.dumps(bare)


def test_anthropic_cache_reads_and_writes_are_mapped_into_usage() -> None:
    made = create_provider("anthropic:claude-sonnet-4-5",
                           environ={"ANTHROPIC_API_KEY": "sk-ant-test"},
                           http_client=Replay(sse("anthropic_stream_text.sse")).client(),
                           retry=RetryPolicy(sleep=no_wait))
    usage = made.step(ProviderRequest("Be brief.", (make_row("user", "hi", id="u1"),))).usage
    assert (usage.input_tokens, usage.cache_read_tokens, usage.cache_write_tokens) == (
        25 + 1800 + 120, 1800, 120)


# -- OpenAI: prompt_cache_key ------------------------------------------------------------------


def _rows(first_id: str, workspace: str = "ws") -> tuple[Any, ...]:
    return (make_row("user", "hello", id=first_id, workspace_id=workspace),
            make_row("assistant", "hi", id="a1", workspace_id=workspace))


def test_the_cache_key_is_one_per_workspace_and_window() -> None:
    window = prompt_cache_key(ProviderRequest("s", _rows("u1")))
    later = prompt_cache_key(ProviderRequest("s", (*_rows("u1"), make_row("user", "more",
                                                                         id="u2"))))
    assert window is not None and window == later  # every request of a window shares it
    assert prompt_cache_key(ProviderRequest("s", _rows("lead-in-7"))) != window  # new window
    assert prompt_cache_key(ProviderRequest("s", _rows("u1", "other"))) != window
    assert len(window) <= 64  # OpenAI's limit on the key


def test_openai_requests_carry_the_key_and_compatible_servers_do_not() -> None:
    env = {"OPENAI_API_KEY": "sk-test", "OPENAI_COMPATIBLE_BASE_URL": "http://localhost:1/v1"}
    request = ProviderRequest("s", _rows("u1"))
    sent = []
    for model in ("openai:gpt-4o", "openai-compatible:llama3.1"):
        replay = Replay(recorded("openai__gpt-4o__text.sse").response())
        create_provider(model, environ=env, http_client=replay.client(),
                        settings=Settings().with_value("contextWindow.openai-compatible:llama3.1",
                                                       8192)).step(request)
        sent.append(replay.bodies()[0])
    assert sent[0]["prompt_cache_key"] == prompt_cache_key(request)
    assert "prompt_cache_key" not in sent[1]


# -- where the user sees it --------------------------------------------------------------------


def test_the_meter_line_shows_cache_reads_and_writes_and_a_rollover_says_a_new_prefix() -> None:
    out: list[str] = []
    render = Renderer(out=out.append, err=out.append, color=False)
    render(StepUsage(1945, 200_000, 1, "Rolls over at 70%", 1800, 120))
    render(StepUsage(50, 200_000, 0, "Rolls over at 70%"))
    render(RolledOver("on-send", "w:0", "w:9", 140_000))
    text = "".join(out)
    assert "cache 1800 read, 120 written" in text
    assert text.count(" written") == 1  # nothing said when the provider reported no cache
    assert NEW_PREFIX_NOTE in text


def test_the_turns_usage_sums_cache_tokens_for_run_json(tmp_path: Path) -> None:
    replay = Replay(sse("anthropic_stream_text.sse"), sse("anthropic_stream_text.sse"))
    rig = Rig(tmp_path, "anthropic:claude-sonnet-4-5", replay, experiment=True)
    rig.session.send("one")
    result = rig.session.send("two")
    assert result.to_json()["usage"] == {
        "inputTokens": 1945, "outputTokens": 15, "cacheReadTokens": 1800,
        "cachedInputTokens": 1800, "cacheWriteTokens": 120}


def test_the_full_screen_meter_shows_the_cache_too() -> None:
    assert usage_meter(StepUsage(1945, 200_000, 1, "Rolls over by 75%", 1800, 120)) == (
        "1% · rolls over by 75% · cache 1800 read, 120 written")
    assert usage_meter(StepUsage(50, 200_000, 0, "Rolls over by 75%")) == "0% · rolls over by 75%"
