"""segue's context engine inside the OpenAI Agents SDK, offline.

A long run reads a report chunk by chunk with a small (4,000-token) context window, rolls
over to fresh windows instead of compacting, and at the end looks the first chunk's detail
up with ``session_history``. The model is a scripted fake built on the SDK's own ``Model``
interface, so nothing leaves the machine. Needs ``pip install 'segue[openai-agents]'``.

    SEGUE_HOME=/tmp/segue-demo python examples/openai_agents_rollover.py
    segue --home /tmp/segue-demo -w openai-agents-rollover history windows

Exits 0 when the look-back recovered the detail from the first window, 1 otherwise.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import uuid
from collections.abc import AsyncIterator
from typing import Any

from agents import Agent, Runner, Usage, function_tool
from agents.items import ModelResponse
from agents.models.interface import Model
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from segue.integrations.openai_agents import RolloverSession

WORKSPACE = "openai-agents-rollover"
CHUNKS = 12
DETAIL = re.compile(r"vault code is (\d{4}-\d{4})")
FILLER = (
    "The quarterly audit walked through the ledgers line by line, noting each transfer, "
    "each signature and each discrepancy that later reviews would need to reconcile. "
)


def chunk_text(n: int) -> str:
    body = FILLER * 12
    if n == 0:
        return f"Chunk 0. The vault code is 4711-0815. {body}"
    return f"Chunk {n}. {body}"


@function_tool
def read_chunk(n: int) -> str:
    """Read chunk ``n`` of the report."""
    return chunk_text(n)


class ScriptedModel(Model):
    """Reads every chunk, then searches the history for the vault code and answers with what
    the search returned. It remembers whether the detail was still in its input when it
    looked back, because a look-back only proves something when the window had rolled."""

    def __init__(self) -> None:
        self.step = 0
        self.detail_in_view_at_lookback: bool | None = None

    async def get_response(  # noqa: PLR0917 - the SDK's signature
        self,
        system_instructions: str | None,
        input: str | list[Any],
        model_settings: Any,
        tools: list[Any],
        output_schema: Any,
        handoffs: list[Any],
        tracing: Any,
        *,
        previous_response_id: str | None,
        conversation_id: str | None,
        prompt: Any,
        **_: Any,
    ) -> ModelResponse:
        self.step += 1
        items = input if isinstance(input, list) else [{"role": "user", "content": input}]
        if self.step <= CHUNKS:
            return _call("read_chunk", {"n": self.step - 1})
        if self.step == CHUNKS + 1:
            self.detail_in_view_at_lookback = bool(DETAIL.search(json.dumps(items)))
            return _call("session_history", {"action": "search", "query": "vault code"})
        found = _detail_from_lookback(items)
        answer = f"The vault code is {found}." if found else "I could not find the vault code."
        return ModelResponse(output=[_message(answer)], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("this example does not stream")


def _detail_from_lookback(items: list[Any]) -> str | None:
    outputs = [i for i in items if isinstance(i, dict) and i.get("type") == "function_call_output"]
    if not outputs:
        return None
    result = json.loads(outputs[-1]["output"])
    for item in result.get("items", []):
        match = DETAIL.search(item.get("text", ""))
        if match:
            return match.group(1)
    return None


def _call(name: str, args: dict[str, Any]) -> ModelResponse:
    call_id = f"call_{uuid.uuid4().hex[:12]}"
    call = ResponseFunctionToolCall(
        type="function_call",
        call_id=call_id,
        name=name,
        arguments=json.dumps(args),
        id=f"fc_{call_id}",
        status="completed",
    )
    return ModelResponse(output=[call], usage=Usage(), response_id=None)


def _message(text: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(
        type="message",
        id=f"msg_{uuid.uuid4().hex[:12]}",
        role="assistant",
        status="completed",
        content=[ResponseOutputText(type="output_text", text=text, annotations=[])],
    )


async def main() -> int:
    session = RolloverSession(WORKSPACE, model="openai:gpt-4o", context_window=4000)
    await session.clear_session()  # a fresh run each time
    model = ScriptedModel()
    agent = Agent(
        name="auditor",
        instructions="Read the report, then answer from it.",
        model=model,
        tools=[read_chunk, *session.tools()],
    )
    result = await Runner.run(
        agent,
        "Read all chunks of the report, then tell me the vault code.",
        session=session,
        run_config=session.run_config(tracing_disabled=True),
        max_turns=CHUNKS + 5,
    )
    windows = session.engine.history({"action": "list_windows", "limit": 50})["windows"]
    print(f"windows: {len(windows)} (home {session.layout.home})")
    print(f"answer: {result.final_output}")
    if len(windows) < 3:
        print("the run did not roll over twice", file=sys.stderr)
        return 1
    if model.detail_in_view_at_lookback:
        print("the detail was still in view: the look-back proved nothing", file=sys.stderr)
        return 1
    if "4711-0815" not in str(result.final_output):
        print("session_history did not recover the first window's detail", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
