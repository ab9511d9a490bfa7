"""The prompt cache over a long session's life, through the real SDKs: what a compaction, a
memory write and a rollover that carries files send (breakpoints, byte-stable prefixes), and
the cache figures each API's usage object gives (field by field, none invented)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import httpx2
import pytest

from segue import ProviderRequest, SettingsError, Usage, create_provider, make_row
from segue._providers.anthropic_messages import MAX_BREAKPOINTS
from segue._providers.retry import RetryPolicy
from segue._session.result import UsageTotal
from segue._settings import Settings
from segue._tools.carryover import FileState

from .recordings import recorded
from .replay import Replay, no_wait, sse
from .test_engine_wire import Rig
from .test_prompt_cache import marks


def text_replies(n: int) -> Replay:
    return Replay(*(sse("anthropic_stream_text.sse") for _ in range(n)))


def without_marks(value: Any) -> Any:
    """``value`` with every ``cache_control`` removed (markers do not change the prefix)."""
    if isinstance(value, dict):
        return {k: without_marks(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [without_marks(v) for v in value]
    return value


def reads_what_the_last_wrote(before: dict[str, Any], after: dict[str, Any]) -> None:
    """``after`` repeats ``before``'s tools, system text and messages byte for byte and holds a
    breakpoint on the block where ``before`` ended, so it reads all ``before`` wrote."""
    assert json.dumps(after["tools"]) == json.dumps(before["tools"])
    assert json.dumps(after["system"]) == json.dumps(before["system"])
    n = len(before["messages"])
    assert n > 0
    assert without_marks(after["messages"][:n]) == without_marks(before["messages"])
    assert f"messages[{n - 1}][{len(before['messages'][-1]['content']) - 1}]" in marks(after)
    assert len(marks(after)) <= MAX_BREAKPOINTS


def memory_dir(rig: Rig) -> Path:
    folder = rig.layout.notes.parent
    folder.mkdir(parents=True, exist_ok=True)
    return folder


# -- 1. a compaction reads the window's cache --------------------------------------------------


def test_the_compaction_request_repeats_the_windows_prefix(tmp_path: Path) -> None:
    replay = text_replies(2)
    rig = Rig(tmp_path, "anthropic:claude-sonnet-4-5", replay, experiment=False)
    assert rig.session.send("hello").status == "completed"
    rig.session.compact()
    turn, summary = replay.bodies()
    assert turn["tools"], "the window advertises tools"
    assert summary["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    reads_what_the_last_wrote(turn, summary)
    assert summary["messages"][-1]["content"][-1]["text"].startswith("[segue] Summarize")


# -- 2. a memory write keeps the window's system text ------------------------------------------


def test_a_memory_write_or_an_unchanged_save_keeps_the_windows_system_text(
        tmp_path: Path) -> None:
    replay = text_replies(4)
    rig = Rig(tmp_path, "anthropic:claude-sonnet-4-5", replay, experiment=False)
    folder = memory_dir(rig)
    (folder / "build.md").write_text("run make")
    (folder / "style.md").write_text("four spaces")
    rig.session.send("one")
    (folder / "build.md").write_text("run make check")  # a real change
    os.utime(folder / "style.md", ns=(1, 10**19))  # saved again, unchanged, newest of all
    rig.session.send("two")
    rig.session.compact()
    rig.session.send("three")  # the compaction opened a new window
    first, second, summary, fresh = replay.bodies()
    assert "run make" in first["system"][-1]["text"]
    reads_what_the_last_wrote(first, second)
    reads_what_the_last_wrote(second, summary)
    # The new window reads memory afresh, and still reads tools and the agent's prompt.
    assert "run make check" in fresh["system"][-1]["text"]
    assert fresh["system"][0] == first["system"][0]
    assert "cache_control" in fresh["system"][0]
    assert json.dumps(fresh["tools"]) == json.dumps(first["tools"])


# -- 3. a rollover that carries files still reads tools and prompt -----------------------------


def test_a_fresh_window_with_carried_files_reads_the_cached_tools_and_prompt(
        tmp_path: Path) -> None:
    replay = text_replies(2)
    rig = Rig(tmp_path, "anthropic:claude-sonnet-4-5", replay, experiment=True)
    (memory_dir(rig) / "build.md").write_text("run make")
    s = rig.session
    tools = s.advertised_tools()
    old = ProviderRequest(s.build_system(), (make_row("user", "hi", id="u1"),), tools)
    carried = [FileState("src/app.py", "present", 120, "ab" * 32, 1_700_000_000_000)]
    new = ProviderRequest(s.build_system(carried=carried),
                          (make_row("user", "lead-in", id="lead-in-1"),), tools)
    provider = create_provider("anthropic:claude-sonnet-4-5",
                               environ={"ANTHROPIC_API_KEY": "sk-ant-test"},
                               http_client=replay.client(), retry=RetryPolicy(sleep=no_wait))
    provider.step(old)
    provider.step(new)
    before, after = replay.bodies()
    assert "src/app.py" in after["system"][1]["text"]
    assert "src/app.py" not in before["system"][1]["text"]
    # The prefix a new window shares with the old one: every tool and the agent's prompt,
    # each ending on a breakpoint.
    assert json.dumps(after["tools"]) == json.dumps(before["tools"])
    assert after["system"][0] == before["system"][0]
    assert marks(after)[:2] == [f"tool:{tools[-1]['name']}", "system"]
    assert len(marks(after)) <= MAX_BREAKPOINTS
    # The two blocks are the whole system text, nothing added or lost.
    assert "".join(b["text"] for b in after["system"]) == str(new.system)


def test_one_hour_lifetime_from_the_setting_marks_every_breakpoint() -> None:
    replay = text_replies(1)
    settings = Settings().with_value("anthropic.cacheTtl", "1h")
    made = create_provider("anthropic:claude-sonnet-4-5", settings=settings,
                           environ={"ANTHROPIC_API_KEY": "sk-ant-test"},
                           http_client=replay.client(), retry=RetryPolicy(sleep=no_wait))
    made.step(ProviderRequest("Be brief.", (make_row("user", "hi", id="u1"),),
                              ({"name": "echo", "description": "", "input_schema": {}},)))
    body = replay.bodies()[0]
    controls = [b["cache_control"] for b in (*body["tools"], *body["system"],
                                             *body["messages"][0]["content"])]
    assert controls == [{"type": "ephemeral", "ttl": "1h"}] * 3
    with pytest.raises(SettingsError, match="5m, 1h"):
        Settings().with_value("anthropic.cacheTtl", "2h")


# -- 4. and 5. usage, field by field -----------------------------------------------------------


def openai_text_with_usage(usage: dict[str, Any]) -> httpx2.Response:
    body = recorded("openai__gpt-4o__text.sse").body
    old = b'"usage":{"prompt_tokens":14,"completion_tokens":30,"total_tokens":44,' \
          b'"completion_tokens_details":{"reasoning_tokens":0}}'
    assert old in body
    return httpx2.Response(200, headers={"content-type": "text/event-stream"},
                           content=body.replace(old, b'"usage":' + json.dumps(usage).encode()))


REQUEST = ProviderRequest("s", (make_row("user", "hi", id="u1", workspace_id="ws"),))


@pytest.mark.parametrize(("details", "read", "written"), [
    ({"cached_tokens": 1024, "cache_write_tokens": 2048}, 1024, 2048),
    ({"cached_tokens": 1024}, 1024, None),  # an older model: writes not reported, not zero
    (None, None, None),
])
def test_chat_completions_usage_reads_cache_writes_where_present(
        details: dict[str, int] | None, read: int | None, written: int | None) -> None:
    usage: dict[str, Any] = {"prompt_tokens": 4000, "completion_tokens": 30,
                             "total_tokens": 4030}
    if details is not None:
        usage["prompt_tokens_details"] = details
    replay = Replay(openai_text_with_usage(usage))
    got = create_provider("openai:gpt-4o", environ={"OPENAI_API_KEY": "sk-test"},
                          http_client=replay.client()).step(REQUEST).usage
    assert got == Usage(input_tokens=4000, output_tokens=30, cache_read_tokens=read,
                        cache_write_tokens=written)


def test_responses_usage_reads_cache_writes() -> None:
    body = recorded("openai-responses__gpt-5.1__tool_call.chunks.txt").body
    old = b'"input_tokens_details":{"cache_write_tokens":0,"cached_tokens":0}'
    assert old in body
    body = body.replace(old, b'"input_tokens_details":{"cache_write_tokens":30,'
                             b'"cached_tokens":12}')
    replay = Replay(httpx2.Response(200, headers={"content-type": "text/event-stream"},
                                    content=body))
    got = create_provider("openai-responses:gpt-5.1", environ={"OPENAI_API_KEY": "sk-test"},
                          http_client=replay.client()).step(REQUEST).usage
    assert got == Usage(input_tokens=45, output_tokens=25, cache_read_tokens=12,
                        cache_write_tokens=30)


def test_the_cache_read_has_two_names_and_is_never_summed_with_itself() -> None:
    total = UsageTotal()
    total.add(Usage(2000, 10, cache_read_tokens=1800, cache_write_tokens=120))
    total.add(Usage(2100, 12, cache_read_tokens=1920, cache_write_tokens=100))
    obj = total.to_obj()
    assert obj is not None
    assert obj["cachedInputTokens"] == obj["cacheReadTokens"] == 3720  # Xum's name, segue's
    assert obj["inputTokens"] == 4100  # reads and writes are inside it, not added to it
    assert obj["cacheWriteTokens"] == 220


# -- 6. no usage in the stream: the meter says it is an estimate -------------------------------


def without_usage_chunk() -> httpx2.Response:
    """The recorded reply as a server that never sends usage streams it (a local server,
    ``include_usage`` ignored): the usage chunk left out, ``finish_reason`` kept."""
    lines = recorded("openai__gpt-4o__text.sse").body.split(b"\n\n")
    kept = [line for line in lines if b'"usage":{' not in line]
    assert len(kept) == len(lines) - 1
    return httpx2.Response(200, headers={"content-type": "text/event-stream"},
                           content=b"\n\n".join(kept))


def test_without_usage_the_meter_shows_segues_own_count_marked_as_an_estimate(
        tmp_path: Path) -> None:
    from segue import StepUsage
    from segue._render.terminal import Renderer
    from segue._tui.lines import usage_meter

    rig = Rig(tmp_path, "openai:gpt-4o", Replay(without_usage_chunk()), experiment=True)
    result = rig.session.send("What is the capital of France?")
    assert result.status == "completed" and result.usage is None  # nothing invented
    (step,) = [e for e in rig.events if isinstance(e, StepUsage)]
    assert step.estimated and step.tokens > 0 and step.cache_read is None
    out: list[str] = []
    Renderer(out=out.append, err=out.append, color=False)(step)
    line = "".join(out)
    assert f"[~{step.percent}% (estimate) · " in line
    assert usage_meter(step).startswith(f"~{step.percent}% (estimate) · ")
    # With usage reported, the figure is the provider's and carries no mark.
    (tmp_path / "b").mkdir()
    rig2 = Rig(tmp_path / "b", "openai:gpt-4o",
               Replay(recorded("openai__gpt-4o__text.sse").response()), experiment=True)
    rig2.session.send("What is the capital of France?")
    (reported,) = [e for e in rig2.events if isinstance(e, StepUsage)]
    assert not reported.estimated and reported.tokens == 14 + 30
    assert usage_meter(reported).startswith(f"{reported.percent}% · ")
