"""End to end: a real Session whose provider is the OpenAI adapter on a mock transport runs a
turn with tool calls; what the API received, what was stored and what was streamed agree."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from segue import (
    ApprovalGate,
    ApprovalMode,
    AssistantText,
    Event,
    HistoryStore,
    Layout,
    Session,
    SessionConfig,
    create_provider,
    resolve_agent,
)
from segue._providers.retry import RetryPolicy
from segue._tokens import calibration_file
from segue._tools.base import FunctionTool, ToolRegistry

from .replay import Replay, no_wait, sse


def _echo(args: Mapping[str, Any]) -> Any:
    return {"ok": True, "text": " ".join([str(args["word"])] * int(args.get("times", 1)))}


def _read(args: Mapping[str, Any]) -> Any:
    return {"ok": True, "path": args["path"], "text": "# README\n"}


TOOLS = (
    FunctionTool("echo", "Repeat a word.",
                 {"type": "object", "properties": {"word": {"type": "string"},
                                                   "times": {"type": "integer"}}}, _echo),
    FunctionTool("file_read", "Read a file.",
                 {"type": "object", "properties": {"path": {"type": "string"}}}, _read),
)


@pytest.fixture
def session_parts(tmp_path: Path) -> tuple[Layout, Replay, list[Event], Session]:
    layout = Layout(tmp_path / "home", "ws")
    (tmp_path / "work").mkdir()
    replay = Replay(sse("openai_stream_tool_calls.sse"), sse("openai_stream_text.sse"))
    provider = create_provider("openai:gpt-4o", environ={"OPENAI_API_KEY": "sk-test"},
                               http_client=replay.client(), retry=RetryPolicy(sleep=no_wait))
    events: list[Event] = []
    session = Session(
        layout,
        HistoryStore(layout, durable=False),
        provider,
        agent=resolve_agent("exec", tmp_path / "work"),
        tools=ToolRegistry(TOOLS),
        config=SessionConfig(experiment=True, threshold=70),
        on_event=events.append,
        # these tests are about the engine, not approval (R38)
        approval=ApprovalGate(ApprovalMode.FULL),
    )
    return layout, replay, events, session


def test_a_turn_with_tool_calls_through_the_openai_adapter(
    session_parts: tuple[Layout, Replay, list[Event], Session],
) -> None:
    layout, replay, events, session = session_parts
    result = session.send("Echo café three times and read the README.")
    assert result.status == "completed"
    assert result.text == "The capital of France is Paris."
    replay.assert_done()

    first, second = replay.bodies()
    assert first["messages"][-1] == {"role": "user",
                                     "content": "Echo café three times and read the README."}
    assert {t["function"]["name"] for t in first["tools"]} >= {"echo", "file_read"}
    # The second step replays the calls and their results as tool messages.
    replayed = second["messages"][len(first["messages"]):]
    assert replayed[0]["role"] == "assistant"
    assert [c["id"] for c in replayed[0]["tool_calls"]] == [
        "call_DdmO9pD3xa9XTPNJ32zg2hcA", "call_ABTdSOMVJdo5q7AXyS3L3mUi"]
    assert replayed[1]["role"] == "tool"
    assert "café café café" in replayed[1]["content"]
    assert replayed[2]["tool_call_id"] == "call_ABTdSOMVJdo5q7AXyS3L3mUi"

    streamed = "".join(e.text for e in events if isinstance(e, AssistantText))
    assert "Let me look." in streamed
    assert "The capital of France is Paris." in streamed

    assistant = [r for r in session.window() if r.role == "assistant"]
    assert assistant[0].metadata["usage"] == {"inputTokens": 152, "outputTokens": 61,
                                                 "cacheReadTokens": 0, "cachedInputTokens": 0}
    assert assistant[0].metadata["model"] == "openai:gpt-4o"
    tool_parts = [p for p in assistant[0].parts if p.type == "dynamic-tool"]
    assert [p.toolName for p in tool_parts] == ["echo", "file_read"]
    assert tool_parts[0].output == {"ok": True, "text": "café café café"}
    assert assistant[-1].metadata["usage"] == {"inputTokens": 19, "outputTokens": 8,
                                                  "cacheReadTokens": 0, "cachedInputTokens": 0}
    # Provider-reported input usage feeds calibration for the OpenAI family.
    assert calibration_file.path_for(layout.home).exists()
