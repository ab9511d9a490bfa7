"""``openai-responses:`` models (and ``openai:`` models that only the Responses API serves)
through the official SDK's Responses API, streamed. Needs the optional ``openai`` extra (from
a checkout: ``pip install -e '.[openai]'``; from a release: ``pip install 'segue[openai]'``).

Translation (from :func:`~segue._providers.request.to_messages`, after
:func:`~segue._providers.wire.complete_tool_pairs`), as input items:

* the request's system text is ``instructions``; system rows are ``system`` messages;
* user text and media → a ``user`` message of ``input_text`` / ``input_image`` /
  ``input_file`` parts (text-like files inline as text);
* assistant text → an ``assistant`` message; a tool call → a ``function_call`` item
  (``call_id``, ``name``, ``arguments`` as JSON text); its result → ``function_call_output``;
* a stored reasoning item → a ``reasoning`` item with its ``encrypted_content``: segue sends
  ``store: false`` (nothing is kept on OpenAI's side), so the model's reasoning across tool
  calls survives only by being sent back, which reasoning models ask for.

Streaming: ``response.output_text.delta`` goes to ``on_event`` as it arrives; a
``function_call`` item's arguments arrive as deltas and are taken whole from its
``response.output_item.done``; reasoning items are kept from theirs. The stream ends with
``response.completed`` (finish ``stop`` or ``tool-calls``), ``response.incomplete`` (``length``
for ``max_output_tokens``, ``content-filter``) or ``response.failed`` / ``error`` (classified
like any error: overflow, transient, or not). A stream without any of them was cut off.

Usage: ``input_tokens`` (cached included; ``cached_tokens`` is the cache read,
``cache_write_tokens`` the write where reported) and
``output_tokens`` (reasoning included). ``prompt_cache_key`` is sent per workspace and window.
Retries, fallback and overflow follow the same rules as Chat Completions
(:mod:`segue._providers.retry`, :mod:`segue._providers.failures`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from segue._errors import ProviderError, TransientProviderError, UsageError
from segue._providers.base import (
    EventSink,
    FinishReason,
    StepResult,
    TextDelta,
    ToolCallEvent,
    Usage,
)
from segue._providers.failures import ApiFailure, classify
from segue._providers.openai_chat import OPENAI_KEY_ENV, OPENAI_URL_ENV, prompt_cache_key
from segue._providers.request import (
    Media,
    Message,
    ProviderRequest,
    Reasoning,
    Text,
    ToolCall,
    ToolResult,
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
    inline_text_media,
    tool_output_text,
    usage_count,
)

if TYPE_CHECKING:
    from openai import OpenAI

#: Models OpenAI serves through the Responses API only; ``openai:`` uses it for them.
RESPONSES_ONLY = re.compile(
    r"(o1-pro|o3-pro|o3-deep-research|o4-mini-deep-research|codex-mini|computer-use-preview"
    r"|gpt-5(\.\d+)?-(pro|codex)(-.*)?)([-.:].*)?")
#: Reasoning models: their reasoning is asked for as encrypted content and sent back.
REASONING = re.compile(r"(o\d|gpt-5|codex-mini)([-.:].*)?")


def responses_only(name: str) -> bool:
    return RESPONSES_ONLY.fullmatch(name.lower().rsplit("/", 1)[-1]) is not None


def is_reasoning_model(name: str) -> bool:
    return REASONING.fullmatch(name.lower().rsplit("/", 1)[-1]) is not None


# -- request translation (pure) ----------------------------------------------------------------


def input_items(request: ProviderRequest) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for pending in complete_tool_pairs(to_messages(request.rows)):
        message = inline_text_media(pending)
        if message.role == "assistant":
            out.extend(_assistant(message))
        elif message.role == "system":
            out.append({"role": "system", "content": message.text})
        else:
            out.extend(_user(message))
    return out


def response_tools(tools: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "name": tool["name"],
            "description": tool.get("description", ""),
            "parameters": tool.get("input_schema", {"type": "object", "properties": {}}),
        }
        for tool in tools
    ]


def _assistant(message: Message) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    text: list[str] = []

    def flush() -> None:
        if text:
            out.append({"role": "assistant", "content": "".join(text)})
            text.clear()

    for block in message.content:
        if isinstance(block, Text):
            text.append(block.text)
            continue
        flush()
        if isinstance(block, Reasoning):
            if block.provider == "openai":
                summary = ([{"type": "summary_text", "text": block.summary}]
                           if block.summary else [])
                out.append({"type": "reasoning", "id": block.item_id,
                            "encrypted_content": block.encrypted_content, "summary": summary})
        elif isinstance(block, ToolCall):
            out.append({"type": "function_call", "call_id": block.id, "name": block.name,
                        "arguments": json.dumps(dict(block.input), ensure_ascii=False)})
        else:
            raise UsageError("an assistant message with media cannot be sent to the "
                             "Responses API")
    flush()
    return out


def _user(message: Message) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [
        {"type": "function_call_output", "call_id": b.tool_call_id,
         "output": tool_output_text(b.output)}
        for b in message.content if isinstance(b, ToolResult)
    ]
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, Text):
            parts.append({"type": "input_text", "text": block.text})
        elif isinstance(block, Media):
            parts.append(_media(block))
    if parts:
        out.append({"role": "user", "content": parts})
    return out


def _media(media: Media) -> dict[str, Any]:
    if media.media_type.startswith("image/"):
        return {"type": "input_image", "image_url": media.url}
    if media.media_type == "application/pdf" and media.url.startswith("data:"):
        return {"type": "input_file", "filename": media.filename or "document.pdf",
                "file_data": media.url}
    raise UsageError(f"the Responses API cannot take a {media.media_type} attachment "
                     f"({media.filename or media.url[:40]}); send images or PDFs")


# -- stream assembly (pure over event objects) -------------------------------------------------


@dataclass
class _Call:
    call_id: str
    name: str
    arguments: list[str] = field(default_factory=list)
    done: bool = False


class ResponseStream:
    """Folds Responses stream events into a :class:`StepResult`, emitting text."""

    def __init__(self, emit: EventSink, label: str) -> None:
        self._emit = emit
        self._label = label
        self._text: list[str] = []
        self._calls: dict[int, _Call] = {}
        self._reasoning: list[Reasoning] = []
        self._usage = Usage()
        self._status: str | None = None
        self._incomplete: str | None = None
        self._last_index = -1

    def feed(self, event: Any) -> None:
        kind = getattr(event, "type", "")
        if kind == "response.output_text.delta":
            self._text.append(event.delta)
            self._emit(TextDelta(event.delta))
        elif kind == "response.output_item.added":
            self._last_index = max(self._last_index, event.output_index)
            item = event.item
            if item.type == "function_call":
                self._calls[event.output_index] = _Call(item.call_id, item.name)
        elif kind == "response.function_call_arguments.delta":
            call = self._calls.get(event.output_index)
            if call is not None:
                call.arguments.append(event.delta)
        elif kind == "response.output_item.done":
            self._item_done(event.output_index, event.item)
        elif kind in ("response.completed", "response.incomplete"):
            response = event.response
            self._status = response.status or kind.rpartition(".")[2]
            details = getattr(response, "incomplete_details", None)
            self._incomplete = getattr(details, "reason", None) if details else None
            if response.usage is not None:
                self._usage = response_usage(response.usage)
        elif kind == "response.failed":
            error = event.response.error
            raise classify(ApiFailure(self._label, getattr(error, "message", "") or "failed",
                                      None, None, getattr(error, "code", None),
                                      in_stream=True), key_env=OPENAI_KEY_ENV)
        elif kind == "error":
            raise classify(ApiFailure(self._label, event.message or "error", None, None,
                                      event.code, in_stream=True), key_env=OPENAI_KEY_ENV)

    def _item_done(self, index: int, item: Any) -> None:
        if item.type == "function_call":
            call = self._calls.setdefault(index, _Call(item.call_id, item.name))
            call.arguments = [item.arguments or "".join(call.arguments)]
            call.done = True
        elif item.type == "reasoning" and getattr(item, "encrypted_content", None):
            summary = "".join(getattr(s, "text", "") for s in item.summary or ())
            self._reasoning.append(Reasoning("openai", item.id, item.encrypted_content,
                                             summary))

    def result(self) -> StepResult:
        if self._status is None:
            raise TransientProviderError(
                "the reply stream ended before response.completed: the connection was cut")
        finish: FinishReason
        truncated: str | None = None
        if self._status == "incomplete":
            finish = ("content-filter" if self._incomplete == "content_filter" else "length"
                      if self._incomplete == "max_output_tokens" else "other")
            last = self._calls.get(self._last_index)
            if finish == "length" and last is not None and not last.done:
                truncated = last.name
        else:
            finish = "tool-calls" if self._calls else "stop"
        calls = tuple(self._call(c) for i, c in sorted(self._calls.items())
                      if not (truncated is not None and i == self._last_index))
        for call in calls:
            self._emit(ToolCallEvent(call))
        return StepResult("".join(self._text), calls, self._usage, finish_reason=finish,
                          truncated_call=truncated, reasoning=tuple(self._reasoning))

    @staticmethod
    def _call(call: _Call) -> ToolCall:
        raw = "".join(call.arguments)
        try:
            args = json.loads(raw) if raw.strip() else {}
        except ValueError as exc:
            raise ProviderError(
                f"the model's arguments for tool {call.name!r} are not valid JSON: {exc}"
            ) from None
        if not isinstance(args, dict):
            raise ProviderError(f"the model's arguments for tool {call.name!r} are not an "
                                "object")
        return ToolCall(call.call_id, call.name, args)


def response_usage(usage: Any) -> Usage:
    """``input_tokens`` (cache reads and writes included), ``output_tokens``, and from
    ``input_tokens_details`` the cache read (``cached_tokens``) and, where the model reports
    it, the cache write (``cache_write_tokens``); an absent figure stays ``None``."""
    details = getattr(usage, "input_tokens_details", None)
    cached = getattr(details, "cached_tokens", None)
    written = getattr(details, "cache_write_tokens", None)
    return Usage(usage.input_tokens, usage.output_tokens,
                 cache_read_tokens=usage_count(cached),
                 cache_write_tokens=usage_count(written))


# -- the provider ------------------------------------------------------------------------------


class OpenAIResponsesProvider(SdkProvider):
    label = "OpenAI"

    def __init__(self, model: str, client: OpenAI, *, context_window: int, encoding: str,
                 retry: RetryPolicy | None = None) -> None:
        super().__init__(model, context_window=context_window, encoding=encoding, retry=retry)
        self._client = client

    def params(self, request: ProviderRequest) -> dict[str, Any]:
        """The ``responses.create`` parameters (without ``stream``)."""
        params: dict[str, Any] = {"model": self._name, "input": input_items(request),
                                  "store": False}
        if request.system:
            params["instructions"] = request.system
        if request.tools:
            params["tools"] = response_tools(request.tools)
        if is_reasoning_model(self._name):
            params["include"] = ["reasoning.encrypted_content"]
        key = prompt_cache_key(request)
        if key is not None:
            # As extra body: SDK releases older than the parameter still send it.
            params["extra_body"] = {"prompt_cache_key": key}
        return params

    def _attempt(self, params: dict[str, Any], emit: EventSink) -> StepResult:
        import openai

        assembler = ResponseStream(emit, self.label)
        with sdk_errors(openai, self.label, key_env=OPENAI_KEY_ENV):
            feed_all(self._client.responses.create(stream=True, **params), assembler.feed)
        return assembler.result()


def build(
    model: str,
    *,
    environ: Mapping[str, str],
    context_window: int,
    encoding: str,
    http_client: object | None = None,
    retry: RetryPolicy | None = None,
) -> OpenAIResponsesProvider:
    """UsageError before any request when ``OPENAI_API_KEY`` is missing or the SDK is not
    installed."""
    try:
        import openai
    except ImportError:
        raise missing_sdk(model, "OpenAI", "openai") from None
    key = api_key(environ, OPENAI_KEY_ENV, model=model, vendor="OpenAI", example="sk-…")
    base_url = environ.get(OPENAI_URL_ENV, "").strip() or None
    client = openai.OpenAI(**client_options(key, base_url, http_client))
    return OpenAIResponsesProvider(model, client, context_window=context_window,
                                   encoding=encoding, retry=retry)
