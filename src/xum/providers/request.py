"""What a provider step receives: a provider-neutral request, as pure values.

The context engine builds a :class:`ProviderRequest` from the active window (turning rows
into messages is request assembly, its job); providers translate it into their wire format.
Keeping the request a pure value lets the engine prepare it once, check that it fits, and
send that same object (R21), and lets the scripted provider log exactly what it received.

Shape, close to the common denominator of the real APIs:

* ``system``: the system text;
* ``messages``: alternating turns of ``user`` and ``assistant`` messages, each a tuple of
  blocks. An assistant message may hold text and :class:`ToolCall` blocks; the results of
  those calls come back in the next ``user`` message as :class:`ToolResult` blocks (Anthropic
  shape; the OpenAI adapter splits them into ``tool`` messages). :class:`Media` blocks stand
  for genuine provider media parts (R19);
* ``tools``: the schemas advertised for this step (only these are counted, R20).

The JSON form (:func:`request_to_obj`) uses the camelCase keys of xum's other files and is
what the scripted provider writes to its ``requestLog``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from xum.errors import UsageError

MessageRole = Literal["user", "assistant"]


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Media:
    media_type: str
    url: str
    filename: str | None = None


@dataclass(frozen=True)
class ToolCall:
    """A call the model made: also what a step returns (:class:`StepResult.tool_calls`)."""

    id: str
    name: str
    input: Mapping[str, Any] = field(default_factory=dict, hash=False)


@dataclass(frozen=True)
class ToolResult:
    tool_call_id: str
    name: str
    #: Any JSON value; providers serialize it as they need.
    output: Any = field(hash=False)
    is_error: bool = False


Block = Text | Media | ToolCall | ToolResult


@dataclass(frozen=True)
class Message:
    role: MessageRole
    content: tuple[Block, ...]

    def __post_init__(self) -> None:
        for block in self.content:
            if isinstance(block, ToolCall) and self.role != "assistant":
                raise UsageError("a tool call can only appear in an assistant message")
            if isinstance(block, ToolResult) and self.role != "user":
                raise UsageError("a tool result can only appear in a user message")

    @property
    def text(self) -> str:
        return "".join(b.text for b in self.content if isinstance(b, Text))


@dataclass(frozen=True)
class ToolSchema:
    name: str
    description: str
    input_schema: Mapping[str, Any] = field(hash=False)

    @classmethod
    def from_obj(cls, obj: Mapping[str, Any]) -> ToolSchema:
        """From the ``{"name", "description", "input_schema"}`` dicts ToolRegistry advertises
        (``inputSchema`` is accepted as well)."""
        schema = obj.get("input_schema", obj.get("inputSchema"))
        name, description = obj.get("name"), obj.get("description", "")
        if not isinstance(name, str) or not isinstance(description, str):
            raise UsageError("a tool schema needs a string 'name' and 'description'")
        if not isinstance(schema, Mapping):
            raise UsageError(f"tool {name!r}: the input schema must be an object")
        return cls(name, description, dict(schema))


@dataclass(frozen=True)
class ProviderRequest:
    system: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSchema, ...] = ()


def user(*content: Block | str) -> Message:
    return Message("user", tuple(Text(c) if isinstance(c, str) else c for c in content))


def assistant(*content: Block | str) -> Message:
    return Message("assistant", tuple(Text(c) if isinstance(c, str) else c for c in content))


# -- JSON form ---------------------------------------------------------------------------------


def block_to_obj(block: Block) -> dict[str, Any]:
    if isinstance(block, Text):
        return {"type": "text", "text": block.text}
    if isinstance(block, Media):
        out: dict[str, Any] = {"type": "media", "mediaType": block.media_type, "url": block.url}
        if block.filename is not None:
            out["filename"] = block.filename
        return out
    if isinstance(block, ToolCall):
        return {"type": "tool_call", "id": block.id, "name": block.name,
                "input": dict(block.input)}
    return {"type": "tool_result", "toolCallId": block.tool_call_id, "name": block.name,
            "output": block.output, "isError": block.is_error}


def request_to_obj(request: ProviderRequest) -> dict[str, Any]:
    return {
        "system": request.system,
        "messages": [
            {"role": m.role, "content": [block_to_obj(b) for b in m.content]}
            for m in request.messages
        ],
        "tools": [
            {"name": t.name, "description": t.description, "inputSchema": dict(t.input_schema)}
            for t in request.tools
        ],
    }


def block_from_obj(obj: Mapping[str, Any]) -> Block:
    kind = obj.get("type")
    try:
        if kind == "text":
            return Text(_str(obj, "text"))
        if kind == "media":
            filename = obj.get("filename")
            return Media(_str(obj, "mediaType"), _str(obj, "url"),
                         filename if isinstance(filename, str) else None)
        if kind == "tool_call":
            args = obj.get("input", {})
            if not isinstance(args, Mapping):
                raise UsageError("tool_call input must be an object")
            return ToolCall(_str(obj, "id"), _str(obj, "name"), dict(args))
        if kind == "tool_result":
            return ToolResult(_str(obj, "toolCallId"), _str(obj, "name"), obj.get("output"),
                              obj.get("isError") is True)
    except KeyError as exc:
        raise UsageError(f"a {kind} block needs a string {exc.args[0]!r}") from None
    raise UsageError(f"unknown block type {kind!r}")


def request_from_obj(obj: Mapping[str, Any]) -> ProviderRequest:
    """The inverse of :func:`request_to_obj` (for replaying logged requests)."""
    raw_messages: Sequence[Any] = obj.get("messages", [])
    messages = []
    for raw in raw_messages:
        role = raw.get("role")
        if role not in ("user", "assistant"):
            raise UsageError(f"message role must be user or assistant, not {role!r}")
        messages.append(Message(role, tuple(block_from_obj(b) for b in raw.get("content", []))))
    tools = tuple(ToolSchema.from_obj(t) for t in obj.get("tools", []))
    system = obj.get("system", "")
    if not isinstance(system, str):
        raise UsageError("system must be a string")
    return ProviderRequest(system, tuple(messages), tools)


def _str(obj: Mapping[str, Any], key: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str):
        raise KeyError(key)
    return value
