"""A fake model for the OpenAI Agents SDK, built on its ``Model`` interface: each step is a
function of the input the SDK sends; every input is recorded. Running past the script fails."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

from agents import Usage
from agents.items import ModelResponse
from agents.models.interface import Model
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

Step = Callable[[list[Any]], list[Any]]


def call(name: str, args: dict[str, Any]) -> list[Any]:
    call_id = f"call_{uuid.uuid4().hex[:12]}"
    return [
        ResponseFunctionToolCall(
            type="function_call",
            call_id=call_id,
            name=name,
            arguments=json.dumps(args),
            id=f"fc_{call_id}",
            status="completed",
        )
    ]


def say(text: str) -> list[Any]:
    return [
        ResponseOutputMessage(
            type="message",
            id=f"msg_{uuid.uuid4().hex[:12]}",
            role="assistant",
            status="completed",
            content=[ResponseOutputText(type="output_text", text=text, annotations=[])],
        )
    ]


def outputs(items: list[Any]) -> list[str]:
    """The function-call outputs in a model input, oldest first."""
    return [
        str(i["output"])
        for i in items
        if isinstance(i, dict) and i.get("type") == "function_call_output"
    ]


class ScriptedModel(Model):
    def __init__(self, steps: list[Step]) -> None:
        self.steps = list(steps)
        self.inputs: list[list[Any]] = []
        self.tool_names: list[list[str]] = []

    async def get_response(
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
        items = input if isinstance(input, list) else [{"role": "user", "content": input}]
        self.inputs.append(items)
        self.tool_names.append([t.name for t in tools])
        if not self.steps:
            raise AssertionError("the model was called more often than scripted")
        step = self.steps.pop(0)
        return ModelResponse(output=step(items), usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("not streamed in these tests")
