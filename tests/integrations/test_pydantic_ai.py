"""segue inside pydantic-ai with its own offline models (FunctionModel, TestModel): every
message persisted in Xum's shape, the model handed only the active window (R5-R7), rollover at
least twice, session_history recovering the first window's detail, R13, new_context (R37)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent, AgentRunResult
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel

from segue._errors import RequestRejected, TurnPaused
from segue._tokens import count_text
from segue.integrations.pydantic_ai import SegueHistory
from tests.integrations.helpers import (
    DETAIL,
    ROLLS_OVER_AT,
    VAULT,
    assert_quarantined,
    assert_rollover_shapes,
    chunk,
    disk_rows,
    mux,
    rollovers,
    run_example,
    windows_json,
)

WS = "pydantic-ws"
CHUNKS = 12
Step = Callable[[list[ModelMessage]], ModelResponse]


class Script:
    """FunctionModel's function: scripted steps, every request recorded."""

    def __init__(self, steps: list[Step]) -> None:
        self.steps = list(steps)
        self.seen: list[list[ModelMessage]] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.seen.append(list(messages))
        assert self.steps, "the model was called more often than scripted"
        return self.steps.pop(0)(messages)


def dumped(messages: list[ModelMessage]) -> str:
    return json.dumps([str(m) for m in messages])


def tool(name: str, **args: Any) -> Step:
    return lambda _: ModelResponse(parts=[ToolCallPart(name, args)])


def text(answer: str) -> Step:
    return lambda _: ModelResponse(parts=[TextPart(answer)])


def last_return(messages: list[ModelMessage], name: str) -> Any:
    for message in reversed(messages):
        for part in message.parts:
            if isinstance(part, ToolReturnPart) and part.tool_name == name:
                return part.content
    raise AssertionError(f"no {name} result in view")


def agent_for(
    history: SegueHistory, script: Script, *, offer_tools: bool = True
) -> Agent[None, str]:
    agent = Agent(
        FunctionModel(script),
        instructions="Read the report, then answer from it.",
        capabilities=[history.capability(offer_tools=offer_tools)],
    )

    @agent.tool_plain
    def read_chunk(n: int) -> str:
        """Read chunk ``n`` of the report."""
        return chunk(n)

    return agent


def run(agent: Agent[None, str], prompt: str) -> AgentRunResult[str]:
    # asyncio.run closes its loop; run_sync keeps one open past the test.
    return asyncio.run(agent.run(prompt))


def history() -> SegueHistory:
    return SegueHistory(WS, model="openai:gpt-4o", context_window=4000)


def readers() -> list[Step]:
    return [tool("read_chunk", n=n) for n in range(CHUNKS)]


def test_long_run_rolls_over_and_looks_back(segue_home: Path) -> None:
    def answer(messages: list[ModelMessage]) -> ModelResponse:
        result = last_return(messages, "session_history")
        found = [i for i in result["items"] if "4711-0815" in i["text"]]
        return ModelResponse(parts=[TextPart(found[0]["windowId"] if found else "not found")])

    script = Script(
        [*readers(), tool("session_history", action="search", query="vault CODE"), answer]
    )
    h = history()
    result = run(agent_for(h, script), "Read the report, then tell me the vault code.")
    assert result.output == "w:0"

    rows = disk_rows(segue_home, WS)
    starts = rollovers(rows)
    assert len(starts) >= 2
    for index in starts:
        assert_rollover_shapes(rows, index)
    first_roll = next(i for i, m in enumerate(script.seen) if "fresh context window" in dumped(m))
    lookback = CHUNKS
    assert 0 < first_roll < lookback
    assert all(DETAIL not in dumped(m) for m in script.seen[first_roll : lookback + 1])
    assert DETAIL in dumped(script.seen[lookback + 1])
    assert all(count_text(dumped(m), "openai:gpt-4o").tokens < 4000 for m in script.seen)

    # Every message of the run is on disk, the final answer included, verbatim.
    assert all(
        "pydanticAiMessage" in r["metadata"] or "pydanticAiMessages" in r["metadata"]
        for i, r in enumerate(rows)
        if not any(i in range(s, s + 3) for s in starts)
    )
    # Every call is stored once, settled with its result, in Xum's vocabulary (SPEC §3: an
    # ``input-available`` call is an interrupted one).
    calls = [
        p
        for r in rows
        if not r["metadata"].get("rlmPreservedTailCopy")
        for p in r["parts"]
        if p["type"] == "dynamic-tool"
    ]
    assert len(calls) == CHUNKS + 1
    assert all(p["state"] == "output-available" and "output" in p for p in calls)
    assert rows[-1]["role"] == "assistant" and rows[-1]["parts"][0]["text"] == "w:0"
    windows = windows_json(segue_home, WS)
    assert [w["kind"] for w in windows] == ["root"] + ["rollover"] * len(starts)


def test_a_look_back_survives_the_rollover_it_causes(segue_home: Path) -> None:
    """The model reads until the result of its look-back is bound to fill the window, then
    looks back: the step after it rolls over, and the fresh window still holds the result
    (and quotes the prompt), so the model answers instead of searching again."""
    h = history()
    looked_at: list[int] = []
    reads = [0]

    def step(messages: list[ModelMessage]) -> ModelResponse:
        if looked_at:
            found = "4711-0815" in json.dumps(last_return(messages, "session_history"))
            return ModelResponse(parts=[TextPart("the code is 4711-0815" if found else "no")])
        result = json.dumps(h.engine.history(VAULT), ensure_ascii=False)
        if h.context_tokens() + count_text(result, "openai:gpt-4o").tokens < ROLLS_OVER_AT:
            reads[0] += 1
            return ModelResponse(parts=[ToolCallPart("read_chunk", {"n": reads[0] - 1})])
        looked_at.append(len(script.seen) - 1)
        return ModelResponse(parts=[ToolCallPart("session_history", VAULT)])

    script = Script([step] * 40)
    result = run(agent_for(h, script), "Read the report, then tell me the vault code.")
    assert result.output == "the code is 4711-0815"

    (at,) = looked_at
    assert len(script.seen) == at + 2  # one look-back, then the answer
    rows = disk_rows(segue_home, WS)
    looked = max(
        i
        for i, r in enumerate(rows)
        if any(p.get("toolName") == "session_history" and "output" in p for p in r["parts"])
        and not r["metadata"].get("synthetic")
    )
    # The look-back's own step filled the window: the rollover comes right after it.
    (start,) = [i for i in rollovers(rows) if i > looked]
    assert start == looked + 1 and mux(rows[start])["reason"] == "mid-stream"
    assert_rollover_shapes(rows, start)
    after = dumped(script.seen[at + 1])
    assert f"fresh context window (w:{rows[start]['metadata']['historySequence']})" in after
    lead_in = script.seen[at + 1][0].parts[0]
    assert isinstance(lead_in, UserPromptPart)
    assert "<request>\nRead the report, then tell me the vault code.\n</request>" in str(
        lead_in.content
    )
    copies = [r for r in rows[start + 3 :] if r["metadata"].get("rlmPreservedTailCopy")]
    assert copies and all(
        r["metadata"]["synthetic"] is True and r["metadata"]["uiVisible"] is False for r in copies
    )
    found = h.engine.history(VAULT)["items"]
    assert [i["windowId"] for i in found if "4711-0815" in i["text"]] == ["w:0"]


def test_rows_are_xum_shaped_and_a_new_run_continues(segue_home: Path) -> None:
    h = history()
    script = Script([tool("read_chunk", n=1), text("read it"), text("second answer")])
    agent = agent_for(h, script)
    run(agent, "Read chunk 1.")
    rows = disk_rows(segue_home, WS)
    assert [r["role"] for r in rows] == ["user", "assistant", "assistant"]
    assert rows[0]["parts"] == [{"type": "text", "text": "Read chunk 1.", "state": "done"}]
    # The response's call and the return that answers it are one settled call (SPEC §3).
    (call,) = rows[1]["parts"]
    assert (call["type"], call["toolName"], call["state"], call["input"]) == (
        "dynamic-tool",
        "read_chunk",
        "output-available",
        {"n": 1},
    )
    assert call["output"].startswith("Chunk 1.")
    # A new run (a new process would do the same) continues from the store.
    again = agent_for(history(), script)
    run(again, "And now?")
    assert "Read chunk 1." in dumped(script.seen[-1]) and "read it" in dumped(script.seen[-1])
    assert len(disk_rows(segue_home, WS)) == 5


def test_rollover_is_blocked_without_session_history(segue_home: Path) -> None:
    h = history()
    script = Script(readers())
    with pytest.raises(TurnPaused, match="session_history"):
        run(agent_for(h, script, offer_tools=False), "Read the report.")
    rows = disk_rows(segue_home, WS)
    assert rollovers(rows) == []
    assert sum(1 for r in rows if r["parts"][0].get("state") == "output-available") >= 3


def test_model_asks_for_a_new_context(segue_home: Path) -> None:
    h = history()
    script = Script(
        [tool("read_chunk", n=0), tool("new_context", reason="chunk 0 is done"), text("ok")]
    )
    run(agent_for(h, script), "Read chunk 0.")
    rows = disk_rows(segue_home, WS)
    (index,) = rollovers(rows)
    assert_rollover_shapes(rows, index)
    assert mux(rows[index])["requestedBy"] == "model"
    assert mux(rows[index])["reason"] == "on-send"
    window_id = f"w:{rows[index]['metadata']['historySequence']}"
    assert last_return(script.seen[-1], "new_context") == {"ok": True, "windowId": window_id}
    assert DETAIL not in dumped(script.seen[-1])


def test_test_model_and_the_plain_history_processor(segue_home: Path) -> None:
    """pydantic-ai's TestModel calls every tool it is given with generated arguments: the
    schema is accepted and each call gets a well-formed answer, persisted like any other."""
    h = history()
    agent = Agent(
        TestModel(call_tools=["session_history"]),
        capabilities=[ProcessHistory(h.processor)],
        toolsets=[h.toolset()],
    )
    result = run(agent, "look back")
    assert isinstance(result.output, str)
    h.flush(result.all_messages())
    rows = disk_rows(segue_home, WS)
    answers = [
        p["output"]
        for r in rows
        for p in r["parts"]
        if p["type"] == "dynamic-tool" and p["state"] == "output-available"
    ]
    assert answers and all(isinstance(a, dict) and "ok" in a for a in answers)
    assert rows[0]["parts"][0]["text"] == "look back"


def test_example_runs_offline_and_honours_segue_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    run_example(home, "pydantic_ai_rollover.py")
    assert len(windows_json(home, "pydantic-ai-rollover")) >= 3


def test_a_prompt_too_large_for_any_window_is_quarantined(segue_home: Path) -> None:
    script = Script([])
    with pytest.raises(RequestRejected, match="fresh context window"):
        run(agent_for(history(), script), "enormous " * 5000)
    assert script.seen == []  # no model call
    (row,) = disk_rows(segue_home, WS)
    assert_quarantined(row, "enormous")
    assert history().messages() == []  # nothing rejected is ever replayed


BIG = "Now summarize everything you read, in detail, please. " * 60


def test_a_prompt_into_a_full_window_rolls_over_on_send(segue_home: Path) -> None:
    script = Script([*readers()[:3], text("read three"), text("fine")])
    agent = agent_for(history(), script)
    run(agent, "Read three chunks.")
    assert rollovers(disk_rows(segue_home, WS)) == []
    run(agent, BIG)
    rows = disk_rows(segue_home, WS)
    (start,) = rollovers(rows)
    assert_rollover_shapes(rows, start, human_trigger=True)
    assert rows[start + 2]["parts"][0]["text"] == BIG
    sent = dumped(script.seen[-1])
    assert "fresh context window" in sent and "Chunk 2" not in sent
    assert rows[-1]["parts"][0]["text"] == "fine"


def test_the_plain_processor_blocks_without_the_toolset(segue_home: Path) -> None:
    h = history()
    agent = Agent(FunctionModel(Script(readers())), capabilities=[ProcessHistory(h.processor)])

    @agent.tool_plain
    def read_chunk(n: int) -> str:
        """Read chunk ``n`` of the report."""
        return chunk(n)

    with pytest.raises(TurnPaused, match="session_history"):
        run(agent, "Read the report.")
    assert rollovers(disk_rows(segue_home, WS)) == []
