"""pydantic-ai rows use Xum's tool-call vocabulary (SPEC §3): a settled call is
``output-available``, a failed one (a retry) is settled too with ``{"success": false, "error":
…}`` as its output (Xum's and Mux's validators reject ``output-error``); and going on with
``message_history=result.all_messages()`` stores every message once."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.integrations.helpers import disk_rows

_XUM_STATES = {"output-available", "input-available", "input-streaming", "output-redacted"}


def _tool_parts(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [p for r in rows for p in r["parts"] if p["type"] == "dynamic-tool"]


def test_pydantic_ai_retry_is_settled_with_an_error_output(segue_home: Path) -> None:
    pytest.importorskip("pydantic_ai")
    from pydantic_ai import Agent, ModelRetry
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from segue.integrations.pydantic_ai import SegueHistory

    steps = iter([
        ModelResponse(parts=[ToolCallPart("flaky", {"n": 1})]),
        ModelResponse(parts=[ToolCallPart("flaky", {"n": 2})]),
        ModelResponse(parts=[TextPart("done")]),
    ])

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return next(steps)

    history = SegueHistory("pyd-states", model="openai:gpt-4o", context_window=100_000)
    agent = Agent(FunctionModel(model), capabilities=[history.capability(offer_tools=False)])

    @agent.tool_plain
    def flaky(n: int) -> str:
        """Works on the second try."""
        if n == 1:
            raise ModelRetry("disk not mounted")
        return "mounted"

    assert asyncio.run(agent.run("mount it")).output == "done"
    rows = disk_rows(segue_home, "pyd-states")
    assert all(p["state"] in _XUM_STATES for p in _tool_parts(rows))
    results = [p for r in rows if r["role"] == "assistant" for p in r["parts"]
               if p["type"] == "dynamic-tool" and "output" in p]
    failed = results[0]["output"]
    assert results[0]["state"] == "output-available" and failed["success"] is False
    assert "disk not mounted" in failed["error"]
    assert results[1]["output"] == "mounted"


def test_pydantic_ai_going_on_with_all_messages_stores_each_message_once(
    segue_home: Path,
) -> None:
    """pydantic-ai's normal way to go on (``message_history=result.all_messages()``) neither
    stores a response twice nor shows it to the model twice."""
    pytest.importorskip("pydantic_ai")
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from segue.integrations.pydantic_ai import SegueHistory

    seen: list[int] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(len(messages))
        return ModelResponse(parts=[TextPart(f"answer {len(seen)}")])

    history = SegueHistory("pyd-twice", model="openai:gpt-4o", context_window=100_000)
    agent = Agent(FunctionModel(model), capabilities=[history.capability(offer_tools=False)])
    result = asyncio.run(agent.run("turn 1"))
    for turn in range(2, 6):
        result = asyncio.run(agent.run(f"turn {turn}", message_history=result.all_messages()))
    rows = disk_rows(segue_home, "pyd-twice")
    assert [r["parts"][0]["text"] for r in rows] == [
        text for n in range(1, 6) for text in (f"turn {n}", f"answer {n}")
    ]
    assert seen == [1, 3, 5, 7, 9]


def test_pydantic_ai_going_on_after_a_tool_step_stores_it_once(segue_home: Path) -> None:
    """A step's response and its tool return share one row; both come back stamped with it,
    so ``message_history=result.all_messages()`` stores neither again."""
    pytest.importorskip("pydantic_ai")
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from segue.integrations.pydantic_ai import SegueHistory

    seen: list[int] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(len(messages))
        if len(seen) % 2:
            return ModelResponse(parts=[ToolCallPart("probe", {"n": len(seen)})])
        return ModelResponse(parts=[TextPart(f"answer {len(seen)}")])

    history = SegueHistory("pyd-step-once", model="openai:gpt-4o", context_window=100_000)
    agent = Agent(FunctionModel(model), capabilities=[history.capability(offer_tools=False)])

    @agent.tool_plain
    def probe(n: int) -> str:
        """Probe ``n``."""
        return f"probed {n}"

    result = asyncio.run(agent.run("turn 1"))
    result = asyncio.run(agent.run("turn 2", message_history=result.all_messages()))
    rows = disk_rows(segue_home, "pyd-step-once")
    assert [r["role"] for r in rows] == ["user", "assistant", "assistant"] * 2
    calls = _tool_parts(rows)
    assert [(p["state"], p["output"]) for p in calls] == [
        ("output-available", "probed 1"),
        ("output-available", "probed 3"),
    ]
    # Without segue the model would see 1, 3 and then 5, 7 messages: the same here.
    assert seen == [1, 3, 5, 7]
