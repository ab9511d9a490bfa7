"""What a provider step receives, as pure values.

A :class:`ProviderRequest` is exactly what the context engine assembled and counted: the
system text, the active window's provider-eligible rows, and the advertised tool schemas (in
:class:`segue._tools.base.ToolRegistry`'s ``{"name", "description", "input_schema"}`` shape).
Keeping rows, not a translated message list, is deliberate: the engine counts a request with
``segue._tokens.count_request(system, rows, tools, …)`` before sending it, and the provider
receives that same object (R21: no second assembly), so the scripted provider's reported
usage and the engine's own preflight agree to the token.

Adapters for real APIs translate with :func:`to_messages`, a provider-neutral view:

* ``user`` / ``assistant`` / ``system`` messages of :class:`Text`, :class:`Media`,
  :class:`ToolCall` and :class:`ToolResult` blocks;
* a tool call and its result live in one segue row (a ``dynamic-tool`` part with ``input`` and
  ``output``); the view splits it into a ``ToolCall`` in the assistant message and a
  ``ToolResult`` in the user message right after it (Anthropic's shape; an OpenAI adapter
  turns those into ``tool`` messages). A row with text after its tools (a multi-step row) is
  split at each such point, so the order the model produced is kept;
* reasoning is left out, except OpenAI reasoning items with encrypted content (a
  :class:`Reasoning` block, which only the Responses adapter sends back); unknown part types
  are left out; ``file`` parts become :class:`Media`.

The JSON form (:func:`request_to_obj`) is what the scripted provider writes to its
``requestLog``: ``{"system": str, "messages": [row objects as on disk], "tools": [...]}``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from segue._errors import UsageError
from segue._messages import Part, Row, row_from_obj, row_to_obj

MessageRole = Literal["user", "assistant", "system"]
#: ``dynamic-tool`` states whose part carries a result (AI SDK naming).
_RESULT_STATES = frozenset({"output-available", "output-error"})


class SystemText(str):
    """System text that knows its window-independent head: the first ``stable`` characters
    (the agent's prompt) are the same in every window of a workspace, while what follows
    (memory, carried files) is fixed for one window only. A caching adapter puts a breakpoint
    at the end of the head, so a fresh window still reads tools + prompt from the cache.

    It is a ``str`` so that every consumer (counting, middleware, request logs) sees plain
    text; text rebuilt by middleware is a plain ``str`` again and is cached as one block."""

    stable: int

    def __new__(cls, text: str, stable: int) -> SystemText:
        out = super().__new__(cls, text)
        out.stable = max(0, min(stable, len(text)))
        return out


def stable_head(system: str) -> int:
    """How many leading characters of ``system`` stay the same across windows (0: unknown,
    or the whole text is the head)."""
    if isinstance(system, SystemText) and 0 < system.stable < len(system):
        return system.stable
    return 0


@dataclass(frozen=True)
class ProviderRequest:
    system: str
    rows: tuple[Row, ...]
    tools: tuple[Mapping[str, Any], ...] = ()


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
    """A call the model made: a block of an assistant message, and what a step returns."""

    id: str
    name: str
    input: Mapping[str, Any] = field(default_factory=dict, hash=False)


@dataclass(frozen=True)
class ToolResult:
    tool_call_id: str
    name: str
    #: Any JSON value; adapters serialize it as their API needs.
    output: Any = field(hash=False)
    is_error: bool = False


@dataclass(frozen=True)
class Reasoning:
    """A reasoning item a provider returned opaque (OpenAI's encrypted content, with
    ``store: false``), to be sent back on later requests so the model keeps its train of
    thought across tool calls. Only the adapter that made it sends it; others skip it."""

    provider: str
    item_id: str
    encrypted_content: str
    summary: str = ""


Block = Text | Media | ToolCall | ToolResult | Reasoning

#: Where a reasoning part keeps what its provider needs to replay it (the AI SDK's shape).
REASONING_METADATA = "providerMetadata"


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


def to_messages(rows: Sequence[Row]) -> tuple[Message, ...]:
    """The provider-neutral view of ``rows`` (which the engine has already selected)."""
    out: list[Message] = []
    for row in rows:
        blocks: list[Block] = []
        results: list[Block] = []
        for part in row.parts:
            if part.type == "dynamic-tool" and row.role == "assistant":
                blocks.append(ToolCall(part.toolCallId or "", part.toolName or "",
                                       part.input if isinstance(part.input, dict) else {}))
                if part.state in _RESULT_STATES or part.output is not None:
                    results.append(ToolResult(part.toolCallId or "", part.toolName or "",
                                              part.output, part.state == "output-error"))
                continue
            block = (_reasoning_block(part.extra, part.text) if part.type == "reasoning"
                     else _content_block(part.type, part.text, part.mediaType, part.url,
                                         part.filename))
            if block is None:
                continue
            if results:
                # Content after answered tool calls starts the model's next step.
                out.append(Message("assistant", tuple(blocks)))
                out.append(Message("user", tuple(results)))
                blocks, results = [], []
            blocks.append(block)
        if blocks:
            out.append(Message(row.role, tuple(blocks)))
        if results:
            out.append(Message("user", tuple(results)))
    return tuple(out)


def reasoning_part(item: Reasoning) -> Part:
    """The row part that stores ``item`` (and that :func:`to_messages` reads back)."""
    return Part(type="reasoning", text=item.summary, state="done", extra={
        REASONING_METADATA: {item.provider: {"itemId": item.item_id,
                                             "reasoningEncryptedContent": item.encrypted_content}}})


def _reasoning_block(extra: Mapping[str, Any], text: str | None) -> Block | None:
    """A reasoning part with OpenAI's encrypted content becomes a :class:`Reasoning` block;
    any other reasoning (plain text, which no API accepts back) is left out."""
    meta = extra.get(REASONING_METADATA)
    openai = meta.get("openai") if isinstance(meta, dict) else None
    if not isinstance(openai, dict):
        return None
    item_id, encrypted = openai.get("itemId"), openai.get("reasoningEncryptedContent")
    if not isinstance(item_id, str) or not isinstance(encrypted, str):
        return None
    return Reasoning("openai", item_id, encrypted, text or "")


def _content_block(
    kind: str, text: str | None, media_type: str | None, url: str | None, filename: str | None
) -> Block | None:
    if kind == "text":
        return Text(text) if text else None
    if kind == "file" and media_type is not None and url is not None:
        return Media(media_type, url, filename)
    return None  # reasoning, step markers and unknown part types never reach a provider


# -- JSON form ---------------------------------------------------------------------------------


def request_to_obj(request: ProviderRequest) -> dict[str, Any]:
    return {
        "system": str(request.system),
        "messages": [row_to_obj(row) for row in request.rows],
        "tools": [dict(tool) for tool in request.tools],
    }


def request_from_obj(obj: Mapping[str, Any]) -> ProviderRequest:
    """The inverse of :func:`request_to_obj` (to read a requestLog line back)."""
    system = obj.get("system", "")
    messages = obj.get("messages", [])
    tools = obj.get("tools", [])
    if not isinstance(system, str):
        raise UsageError("request: system must be a string")
    if not isinstance(messages, list) or not isinstance(tools, list):
        raise UsageError("request: messages and tools must be lists")
    if not all(isinstance(t, dict) for t in tools):
        raise UsageError("request: every tool must be an object")
    return ProviderRequest(system, tuple(row_from_obj(m) for m in messages), tuple(tools))
