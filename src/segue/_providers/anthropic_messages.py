"""``anthropic:`` models through the official SDK's Messages API, streamed. Needs the
optional ``anthropic`` extra (from a checkout: ``pip install -e '.[anthropic]'``; from a
release: ``pip install 'segue[anthropic]'``).

Translation (from :func:`~segue._providers.request.to_messages`, after
:func:`~segue._providers.wire.complete_tool_pairs`):

* the request's system text is the top-level ``system`` parameter; a system *row* (the API
  has no system role inside ``messages``) becomes a user text block in place;
* blocks map one to one: text → ``text``, tool call → ``tool_use``, tool result →
  ``tool_result`` (output as JSON text, ``is_error`` kept), images → ``image``, PDFs →
  ``document`` (base64 for ``data:`` URLs, else by URL); text-like files inline as text;
  other media is a clear error;
* consecutive messages of one role are merged into one turn, tool results first, as the API
  requires;
* tools ``{"name", "description", "input_schema"}`` are already Anthropic's shape.

``max_tokens`` (required by the API) is R3's output reserve, ``min(8192, limit / 4)``: the
engine keeps exactly that much of the window free for the reply.

Streaming (raw events): ``text_delta`` goes to ``on_event`` as it arrives;
``input_json_delta`` fragments of a ``tool_use`` block are joined and parsed at
``content_block_stop``, then announced. Usage: input is ``input_tokens`` +
``cache_read_input_tokens`` + ``cache_creation_input_tokens`` (all three are prompt the model
read; Anthropic reports them apart), from ``message_start`` and updated by ``message_delta``;
output is the last ``output_tokens`` (cumulative); cache reads and writes are kept apart too.
A stream without ``message_stop`` was cut off and is an error; ``stop_reason`` is kept as
the result's finish reason.

Prompt caching: :func:`cache_breakpoints` marks the tools, the agent's prompt, and the newest
message prefix, so each prefix is written once (at 1.25x the base input price, 2x with the
one-hour lifetime) and read after that at 0.1x. Usage keeps the reads and writes apart.

Reasoning: segue does not ask for extended thinking, so the API sends no ``thinking`` blocks.
Should one arrive (a server-side default), its text is neither shown nor stored: the step
result has no place for reasoning yet, and replaying a thinking block without its signature
would be refused by the API. This is a known gap, not a silent one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from segue._errors import ProviderError, TransientProviderError, UsageError
from segue._providers.base import (
    EventSink,
    FinishReason,
    StepResult,
    TextDelta,
    ToolCallEvent,
    Usage,
)
from segue._providers.request import (
    Block,
    Media,
    ProviderRequest,
    Reasoning,
    Text,
    ToolCall,
    ToolResult,
    stable_head,
    to_messages,
)
from segue._providers.retry import RetryPolicy
from segue._providers.sdk_base import (
    SdkProvider,
    api_key,
    client_options,
    feed_all,
    missing_sdk,
    sdk_errors,
)
from segue._providers.wire import (
    complete_tool_pairs,
    data_url,
    inline_text_media,
    tool_output_text,
)

if TYPE_CHECKING:
    from anthropic import Anthropic
    from anthropic.types import MessageParam, RawMessageStreamEvent, ToolParam

ANTHROPIC_KEY_ENV = "ANTHROPIC_API_KEY"
ANTHROPIC_URL_ENV = "ANTHROPIC_BASE_URL"
#: The setting that picks the prompt cache's lifetime (:data:`CACHE_TTLS`).
CACHE_TTL_SETTING = "anthropic.cacheTtl"
#: R3's output reserve: at most this many tokens, and at most a quarter of the window.
OUTPUT_RESERVE = 8192


def output_reserve(context_window: int) -> int:
    return min(OUTPUT_RESERVE, context_window // 4)


# -- request translation (pure) ----------------------------------------------------------------


def anthropic_messages(request: ProviderRequest) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for pending in complete_tool_pairs(to_messages(request.rows)):
        message = inline_text_media(pending)
        role = "assistant" if message.role == "assistant" else "user"
        blocks = [_block(b) for b in message.content if not isinstance(b, Reasoning)]
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            merged = [*out[-1]["content"], *blocks]
            # tool_result blocks must open a user turn.
            merged.sort(key=lambda b: 0 if b["type"] == "tool_result" else 1)
            out[-1]["content"] = merged
        else:
            out.append({"role": role, "content": blocks})
    return out


def request_params(
    request: ProviderRequest, name: str, max_tokens: int, *, cache: bool, ttl: str = "5m"
) -> dict[str, Any]:
    """The ``messages.create`` parameters of ``request`` (without ``stream``)."""
    params: dict[str, Any] = {
        "model": name,
        "max_tokens": max_tokens,
        "messages": cast("list[MessageParam]", anthropic_messages(request)),
    }
    if request.system:
        params["system"] = system_blocks(request.system) if cache else str(request.system)
    if request.tools:
        params["tools"] = cast("list[ToolParam]", anthropic_tools(request.tools))
    if cache:
        cache_breakpoints(params, ttl=ttl)
    return params


def system_blocks(system: str) -> list[dict[str, Any]]:
    """The system text as text blocks: the window-independent head (the agent's prompt,
    :func:`~segue._providers.request.stable_head`) apart from the rest (memory and carried
    files), so a breakpoint can sit between them. The blocks join to the same text."""
    head = stable_head(system)
    text = str(system)
    if head:
        return [{"type": "text", "text": text[:head]}, {"type": "text", "text": text[head:]}]
    return [{"type": "text", "text": text}]


#: Anthropic accepts at most this many ``cache_control`` breakpoints per request.
MAX_BREAKPOINTS = 4
EPHEMERAL = {"type": "ephemeral"}
#: The cache lifetimes Anthropic offers: five minutes (writes cost 1.25x the base input
#: price) and one hour (writes cost 2x); reads cost 0.1x either way.
CACHE_TTLS = ("5m", "1h")


def cache_breakpoints(params: dict[str, Any], *, ttl: str = "5m") -> int:
    """Mark prompt-cache breakpoints in ``params`` in place; returns how many (at most
    Anthropic's 4).

    The cache is a prefix in the order tools → system → messages; a breakpoint caches
    everything up to and including its block, and a later request reads the longest cached
    prefix it repeats (looking back at most 20 blocks from each of its breakpoints).

    1. the last tool: the tool schemas, the same in every window and for a compaction;
    2. the end of the system text's window-independent head (the agent's prompt), or of the
       whole system text when it has no separate head: a fresh window (after a rollover or a
       compaction, with new memory and carried files) still reads tools + prompt;
    3. the last block of the last message: the next step of the turn, and the next turn of
       the window, append after it, so they read all of it from the cache;
    4. the last block of the message before the newest assistant reply: where the previous
       request ended, so this request reads what that one wrote even when more than 20
       blocks (many parallel tool calls) came since.

    Within a window the system text does not change (memory is read once per window), so
    every request of the window repeats the prefix the one before it wrote. ``ttl`` is the
    same for every breakpoint (Anthropic wants a longer lifetime never after a shorter one);
    ``"5m"`` sends Anthropic's default marker without a ``ttl`` field."""
    if ttl not in CACHE_TTLS:
        raise UsageError(f"the Anthropic cache lifetime must be one of {', '.join(CACHE_TTLS)}, "
                         f"not {ttl!r}")
    marks: list[dict[str, Any]] = []
    if params.get("tools"):
        marks.append(params["tools"][-1])
    system = params.get("system")
    if isinstance(system, list) and system:
        marks.append(system[0])
    messages: list[dict[str, Any]] = params["messages"]
    if messages and messages[-1]["content"]:
        marks.append(messages[-1]["content"][-1])
    replies = [i for i, m in enumerate(messages[:-1]) if m["role"] == "assistant"]
    if replies and replies[-1] > 0:
        previous = messages[replies[-1] - 1]
        if previous["content"]:
            marks.append(previous["content"][-1])
    control = dict(EPHEMERAL) if ttl == "5m" else {**EPHEMERAL, "ttl": ttl}
    placed = 0
    for block in marks[:MAX_BREAKPOINTS]:
        if "cache_control" not in block:
            block["cache_control"] = dict(control)
            placed += 1
    return placed


def anthropic_tools(tools: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "name": tool["name"],
            "description": tool.get("description", ""),
            "input_schema": tool.get("input_schema", {"type": "object", "properties": {}}),
        }
        for tool in tools
    ]


def _block(block: Block) -> dict[str, Any]:
    if isinstance(block, Text):
        return {"type": "text", "text": block.text}
    if isinstance(block, ToolCall):
        return {"type": "tool_use", "id": block.id, "name": block.name,
                "input": dict(block.input)}
    if isinstance(block, ToolResult):
        out: dict[str, Any] = {"type": "tool_result", "tool_use_id": block.tool_call_id,
                               "content": tool_output_text(block.output)}
        if block.is_error:
            out["is_error"] = True
        return out
    if isinstance(block, Reasoning):
        raise UsageError("an OpenAI reasoning item cannot be sent to the Messages API")
    return _media(block)


def _media(media: Media) -> dict[str, Any]:
    if media.media_type.startswith("image/"):
        kind = "image"
    elif media.media_type == "application/pdf":
        kind = "document"
    else:
        raise UsageError(f"the Messages API cannot take a {media.media_type} attachment "
                         f"({media.filename or media.url[:40]}); send images or PDFs")
    inline = data_url(media.url)
    if inline is not None:
        media_type, data = inline
        return {"type": kind,
                "source": {"type": "base64", "media_type": media_type, "data": data}}
    return {"type": kind, "source": {"type": "url", "url": media.url}}


# -- stream assembly (pure over event objects) -------------------------------------------------


@dataclass
class _Block:
    kind: str
    id: str = ""
    name: str = ""
    json_parts: list[str] = field(default_factory=list)
    closed: bool = False


class MessageStream:
    """Folds raw Messages stream events into a :class:`StepResult`, emitting as it goes.

    ``message_stop`` is the stream's terminator: a stream that ends without it was cut off
    and is a :class:`~segue._errors.TransientProviderError`, never a finished reply. With
    ``stop_reason: "max_tokens"`` a ``tool_use`` block that was the last block streamed was
    cut off by the output limit (its JSON may even parse): it is reported as
    ``truncated_call`` and never becomes a call to run."""

    def __init__(self, emit: EventSink) -> None:
        self._emit = emit
        self._text: list[str] = []
        self._calls: list[ToolCall] = []
        self._open: dict[int, _Block] = {}
        self._blocks: list[_Block] = []
        self._input: dict[str, int] = {}
        self.output_tokens: int | None = None
        self.stop_reason: str | None = None
        self.stopped = False

    def feed(self, event: RawMessageStreamEvent) -> None:
        if event.type == "message_start":
            self._usage(event.message.usage)
        elif event.type == "message_delta":
            self._usage(event.usage)
            if event.delta.stop_reason is not None:
                self.stop_reason = event.delta.stop_reason
        elif event.type == "message_stop":
            self.stopped = True
        elif event.type == "content_block_start":
            block = event.content_block
            self._open[event.index] = _Block(
                block.type,
                id=getattr(block, "id", "") or "",
                name=getattr(block, "name", "") or "",
            )
            self._blocks.append(self._open[event.index])
        elif event.type == "content_block_delta":
            delta = event.delta
            if delta.type == "text_delta":
                self._text.append(delta.text)
                self._emit(TextDelta(delta.text))
            elif delta.type == "input_json_delta":
                self._open[event.index].json_parts.append(delta.partial_json)
        elif event.type == "content_block_stop":
            done = self._open.pop(event.index, None)
            if done is not None and done.kind == "tool_use":
                done.closed = True

    def _usage(self, usage: Any) -> None:
        for key in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"):
            value = getattr(usage, key, None)
            if isinstance(value, int):
                self._input[key] = value
        value = getattr(usage, "output_tokens", None)
        if isinstance(value, int):
            self.output_tokens = value

    def _call(self, block: _Block) -> ToolCall:
        raw = "".join(block.json_parts)
        try:
            args = json.loads(raw) if raw.strip() else {}
        except ValueError as exc:
            raise ProviderError(
                f"the model's input for tool {block.name!r} is not valid JSON: {exc}") from None
        if not isinstance(args, dict):
            raise ProviderError(f"the model's input for tool {block.name!r} is not an object")
        return ToolCall(block.id, block.name, args)

    def result(self) -> StepResult:
        if not self.stopped:
            raise TransientProviderError(
                "the reply stream ended before message_stop: the connection was cut")
        uses = [b for b in self._blocks if b.kind == "tool_use"]
        truncated: str | None = None
        if (self.stop_reason == "max_tokens" and uses and self._blocks
                and self._blocks[-1] is uses[-1]):
            truncated = uses.pop().name or "(unnamed)"
        if any(not b.closed for b in uses):
            raise ProviderError("the stream ended inside a tool call")
        for block in uses:
            call = self._call(block)
            self._calls.append(call)
            self._emit(ToolCallEvent(call))
        return StepResult("".join(self._text), tuple(self._calls), self.usage(),
                          finish_reason=anthropic_finish_reason(self.stop_reason),
                          truncated_call=truncated)

    def usage(self) -> Usage:
        """Input is everything the model read: uncached, cache reads and cache writes
        (Anthropic reports the three apart)."""
        input_tokens = sum(self._input.values()) if self._input else None
        return Usage(input_tokens, self.output_tokens,
                     cache_read_tokens=self._input.get("cache_read_input_tokens"),
                     cache_write_tokens=self._input.get("cache_creation_input_tokens"))


_FINISH: dict[str, FinishReason] = {
    "end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length",
    "model_context_window_exceeded": "length", "tool_use": "tool-calls",
    "refusal": "content-filter",
}


def anthropic_finish_reason(raw: str | None) -> FinishReason | None:
    if raw is None:
        return None
    return _FINISH.get(raw, "other")


# -- the provider ------------------------------------------------------------------------------


class AnthropicProvider(SdkProvider):
    def __init__(
        self,
        model: str,
        client: Anthropic,
        *,
        context_window: int,
        encoding: str,
        retry: RetryPolicy | None = None,
        cache: bool = True,
        cache_ttl: str = "5m",
    ) -> None:
        super().__init__(model, context_window=context_window, encoding=encoding, retry=retry)
        self._client = client
        #: Mark prompt-cache breakpoints (:func:`cache_breakpoints`).
        self.cache = cache
        #: Their lifetime: ``"5m"`` or ``"1h"`` (the ``anthropic.cacheTtl`` setting).
        self.cache_ttl = cache_ttl

    def params(self, request: ProviderRequest) -> dict[str, Any]:
        return request_params(request, self._name, output_reserve(self._context_window),
                              cache=self.cache, ttl=self.cache_ttl)

    def _attempt(self, params: dict[str, Any], emit: EventSink) -> StepResult:
        import anthropic

        assembler = MessageStream(emit)
        with sdk_errors(anthropic, "Anthropic", key_env=ANTHROPIC_KEY_ENV):
            feed_all(self._client.messages.create(stream=True, **params), assembler.feed)
        return assembler.result()


def build(
    model: str,
    *,
    environ: Mapping[str, str],
    context_window: int,
    encoding: str,
    http_client: object | None = None,
    retry: RetryPolicy | None = None,
    settings: Mapping[str, Any] | None = None,
) -> AnthropicProvider:
    """An ``anthropic:`` provider; UsageError before any request when ``ANTHROPIC_API_KEY``
    is missing or the SDK is not installed. ``settings`` supplies ``anthropic.cacheTtl``."""
    try:
        import anthropic
    except ImportError:
        raise missing_sdk(model, "Anthropic", "anthropic") from None
    key = api_key(environ, ANTHROPIC_KEY_ENV, model=model, vendor="Anthropic", example="sk-ant-…")
    base_url = environ.get(ANTHROPIC_URL_ENV, "").strip() or None
    client = anthropic.Anthropic(**client_options(key, base_url, http_client))
    ttl = (settings or {}).get(CACHE_TTL_SETTING) or "5m"
    if ttl not in CACHE_TTLS:
        raise UsageError(f"{CACHE_TTL_SETTING} must be one of {', '.join(CACHE_TTLS)}, "
                         f"not {ttl!r}")
    return AnthropicProvider(model, client, context_window=context_window, encoding=encoding,
                             retry=retry, cache_ttl=str(ttl))
