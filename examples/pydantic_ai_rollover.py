"""segue's context engine inside pydantic-ai, offline.

A long run reads a report chunk by chunk with a small (4,000-token) context window; segue's
capability persists every message, rolls over to fresh windows instead of summarizing, and
at the end the model looks the first chunk's detail up with ``session_history``. The model
is pydantic-ai's own ``FunctionModel``, so nothing leaves the machine. Needs
``pip install 'segue[pydantic-ai]'``.

    SEGUE_HOME=/tmp/segue-demo python examples/pydantic_ai_rollover.py
    segue --home /tmp/segue-demo -w pydantic-ai-rollover history windows

Exits 0 when the look-back recovered the detail from the first window, 1 otherwise.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from segue.integrations.pydantic_ai import SegueHistory

WORKSPACE = "pydantic-ai-rollover"
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


class Script:
    """Reads every chunk, then searches the history for the vault code and answers with what
    the search returned; notes whether the detail was still in view when it looked back."""

    def __init__(self) -> None:
        self.step = 0
        self.detail_in_view_at_lookback: bool | None = None

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.step += 1
        if self.step <= CHUNKS:
            return ModelResponse(parts=[ToolCallPart("read_chunk", {"n": self.step - 1})])
        if self.step == CHUNKS + 1:
            seen = json.dumps([str(m) for m in messages])
            self.detail_in_view_at_lookback = bool(DETAIL.search(seen))
            call = ToolCallPart("session_history", {"action": "search", "query": "vault code"})
            return ModelResponse(parts=[call])
        found = _detail_from_lookback(messages)
        answer = f"The vault code is {found}." if found else "I could not find the vault code."
        return ModelResponse(parts=[TextPart(answer)])


def _detail_from_lookback(messages: list[ModelMessage]) -> str | None:
    for message in reversed(messages):
        for part in message.parts:
            if isinstance(part, ToolReturnPart) and part.tool_name == "session_history":
                result: Any = part.content
                for item in result.get("items", []) if isinstance(result, dict) else []:
                    match = DETAIL.search(item.get("text", ""))
                    if match:
                        return match.group(1)
                return None
    return None


def main() -> int:
    history = SegueHistory(WORKSPACE, model="openai:gpt-4o", context_window=4000)
    shutil.rmtree(history.layout.session_dir, ignore_errors=True)  # a fresh run each time
    script = Script()
    agent = Agent(
        FunctionModel(script),
        instructions="Read the report, then answer from it.",
        capabilities=[history.capability()],
    )

    @agent.tool_plain
    def read_chunk(n: int) -> str:
        """Read chunk ``n`` of the report."""
        return chunk_text(n)

    result = agent.run_sync("Read all chunks of the report, then tell me the vault code.")
    windows = history.engine.history({"action": "list_windows", "limit": 50})["windows"]
    print(f"windows: {len(windows)} (home {history.layout.home})")
    print(f"answer: {result.output}")
    if len(windows) < 3:
        print("the run did not roll over twice", file=sys.stderr)
        return 1
    if script.detail_in_view_at_lookback:
        print("the detail was still in view: the look-back proved nothing", file=sys.stderr)
        return 1
    if "4711-0815" not in result.output:
        print("session_history did not recover the first window's detail", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
