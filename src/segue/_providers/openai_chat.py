"""``openai:`` and ``openai-compatible:`` models through the official SDK's Chat Completions
API, streamed. Needs the optional ``openai`` extra (from a checkout:
``pip install -e '.[openai]'``; from a release: ``pip install 'segue[openai]'``).

Translation (from :func:`~segue._providers.request.to_messages`, after
:func:`~segue._providers.wire.complete_tool_pairs`):

* the request's system text is the first ``system`` message; system rows stay ``system``
  messages in place;
* an assistant message becomes one ``assistant`` message: its text as ``content``, its tool
  calls as ``tool_calls`` (arguments as JSON text);
* a user message's tool results become ``tool`` messages (in order, before any user text of
  the same message); the rest is one ``user`` message, a plain string when it is only text
  (some compatible servers accept nothing else), content parts when it carries media
  (images as ``image_url``, PDFs as ``file``; text-like files inline as text; other media is
  a clear error);
* tools ``{"name", "description", "input_schema"}`` become ``{"type": "function", …}``.

Streaming: text deltas go to ``on_event`` as they arrive; tool-call arguments arrive as
fragments keyed by the call's ``index`` and are joined, parsed and announced once the stream
ends. Usage comes from the final chunk (``stream_options.include_usage``): see
:func:`chat_usage`. A stream with neither ``finish_reason`` nor usage was cut off and is an
error (retried when nothing was shown yet); ``finish_reason`` is kept in the result.

Prompt caching: OpenAI caches long prefixes by itself; ``prompt_cache_key`` (one per
workspace and window, :func:`prompt_cache_key`) keeps a window's requests on one cache. It is
sent to ``openai:`` only: compatible servers may refuse unknown parameters.

Reasoning: Chat Completions never returns OpenAI's reasoning; compatible servers that stream
``reasoning_content`` (DeepSeek-R1 style) document that it must not be sent back, so it is not
kept for replay and is not shown.

Keys: ``openai:`` needs ``OPENAI_API_KEY`` (checked before any request; ``OPENAI_BASE_URL``
is honoured). ``openai-compatible:`` takes its base URL from ``OPENAI_COMPATIBLE_BASE_URL``,
else the ``openai-compatible.baseUrl`` setting, and its key from
``OPENAI_COMPATIBLE_API_KEY``; without one a placeholder is sent, which local servers
ignore. ``OPENAI_API_KEY`` is never sent to a compatible server.
"""

from __future__ import annotations

import hashlib
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
from segue._providers.failures import ApiFailure, classify, error_fields
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
    dropped,
    feed_all,
    missing_sdk,
    transport_errors,
)
from segue._providers.wire import (
    complete_tool_pairs,
    inline_text_media,
    tool_output_text,
    usage_count,
)

if TYPE_CHECKING:
    from openai import OpenAI
    from openai.types.chat import ChatCompletionChunk, ChatCompletionMessageParam

OPENAI_KEY_ENV = "OPENAI_API_KEY"
OPENAI_URL_ENV = "OPENAI_BASE_URL"
COMPAT_KEY_ENV = "OPENAI_COMPATIBLE_API_KEY"
COMPAT_URL_ENV = "OPENAI_COMPATIBLE_BASE_URL"
COMPAT_URL_SETTING = "openai-compatible.baseUrl"
#: The SDK refuses to build a client without a key; local servers ignore the header.
NO_KEY = "no-key"


# -- request translation (pure) ----------------------------------------------------------------


def chat_messages(request: ProviderRequest) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if request.system:
        out.append({"role": "system", "content": request.system})
    for pending in complete_tool_pairs(to_messages(request.rows)):
        message = without_reasoning(inline_text_media(pending))
        if message is None:
            continue
        if message.role == "assistant":
            out.append(_assistant(message))
        elif message.role == "system":
            out.append({"role": "system", "content": _only_text(message)})
        else:
            out.extend(_user(message))
    return out


def without_reasoning(message: Message) -> Message | None:
    """``message`` without :class:`Reasoning` blocks (only the Responses API takes them
    back), or None when nothing else is left."""
    if not any(isinstance(b, Reasoning) for b in message.content):
        return message
    rest = tuple(b for b in message.content if not isinstance(b, Reasoning))
    return Message(message.role, rest) if rest else None


def chat_tools(tools: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": tool["name"],
                "description": tool.get("description", ""),
                "parameters": tool.get("input_schema", {"type": "object", "properties": {}}),
            },
        }
        for tool in tools
    ]


def _assistant(message: Message) -> dict[str, Any]:
    calls = [b for b in message.content if isinstance(b, ToolCall)]
    if any(isinstance(b, Media) for b in message.content):
        raise UsageError("an assistant message with media cannot be sent to Chat Completions")
    out: dict[str, Any] = {"role": "assistant", "content": message.text or None}
    if calls:
        out["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name,
                             "arguments": json.dumps(dict(call.input), ensure_ascii=False)},
            }
            for call in calls
        ]
    return out


def _user(message: Message) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [
        {"role": "tool", "tool_call_id": b.tool_call_id, "content": tool_output_text(b.output)}
        for b in message.content
        if isinstance(b, ToolResult)
    ]
    rest = [b for b in message.content if isinstance(b, Text | Media)]
    if not rest:
        return out
    if all(isinstance(b, Text) for b in rest):
        out.append({"role": "user", "content": message.text})
        return out
    parts: list[dict[str, Any]] = []
    for block in rest:
        if isinstance(block, Text):
            parts.append({"type": "text", "text": block.text})
        else:
            parts.append(_media(block))
    out.append({"role": "user", "content": parts})
    return out


def _media(media: Media) -> dict[str, Any]:
    if media.media_type.startswith("image/"):
        return {"type": "image_url", "image_url": {"url": media.url}}
    if media.media_type == "application/pdf" and media.url.startswith("data:"):
        return {"type": "file",
                "file": {"filename": media.filename or "document.pdf", "file_data": media.url}}
    raise UsageError(f"Chat Completions cannot take a {media.media_type} attachment "
                     f"({media.filename or media.url[:40]}); send images or PDFs")


def _only_text(message: Message) -> str:
    if any(not isinstance(b, Text) for b in message.content):
        raise UsageError("a system message can only hold text")
    return message.text


# -- stream assembly (pure over chunk objects) -------------------------------------------------


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class ChatStream:
    """Folds ``ChatCompletionChunk`` values into a :class:`StepResult`, emitting text.

    The end of a reply is the ``finish_reason`` or the usage chunk (``include_usage``); a
    stream that stops with neither was cut off (a proxy or server dropped it) and is a
    :class:`~segue._errors.TransientProviderError`, never a finished reply. With
    ``finish_reason: "length"`` the call being streamed last was cut off by the output limit:
    it is reported as ``truncated_call`` and never parsed into a call to run."""

    def __init__(self, emit: EventSink) -> None:
        self._emit = emit
        self._text: list[str] = []
        self._calls: dict[int, _PartialCall] = {}
        self._usage: Usage | None = None
        self.finish_reason: str | None = None

    def feed(self, chunk: ChatCompletionChunk) -> None:
        if chunk.usage is not None:
            self._usage = chat_usage(chunk.usage)
        for choice in chunk.choices:
            if choice.index != 0:
                continue  # n=1 is what we ask for; other choices would be a server bug
            if choice.finish_reason is not None:
                self.finish_reason = choice.finish_reason
            delta = choice.delta
            if delta.content:
                self._text.append(delta.content)
                self._emit(TextDelta(delta.content))
            for piece in delta.tool_calls or ():
                index = piece.index if piece.index is not None else len(self._calls)
                partial = self._calls.setdefault(index, _PartialCall())
                if piece.id:
                    partial.id = piece.id
                if piece.function is not None:
                    # The name arrives whole in the first fragment; some servers repeat it.
                    if piece.function.name and not partial.name:
                        partial.name = piece.function.name
                    if piece.function.arguments:
                        partial.arguments.append(piece.function.arguments)

    def result(self) -> StepResult:
        if self.finish_reason is None and self._usage is None:
            raise TransientProviderError(
                "the reply stream ended before the server said it was done (no finish_reason "
                "and no usage): the connection was cut")
        order = sorted(self._calls)
        truncated: str | None = None
        if self.finish_reason == "length" and order:
            truncated = self._calls[order.pop()].name or "(unnamed)"
        calls = tuple(self._call(n, self._calls[i]) for n, i in enumerate(order))
        for call in calls:
            self._emit(ToolCallEvent(call))
        return StepResult("".join(self._text), calls, self._usage or Usage(),
                          finish_reason=chat_finish_reason(self.finish_reason),
                          truncated_call=truncated)

    def _call(self, number: int, partial: _PartialCall) -> ToolCall:
        raw = "".join(partial.arguments)
        if not partial.name:
            raise ProviderError("the model streamed a tool call without a name")
        try:
            args = json.loads(raw) if raw.strip() else {}
        except ValueError as exc:
            raise ProviderError(
                f"the model's arguments for tool {partial.name!r} are not valid JSON: {exc}"
            ) from None
        if not isinstance(args, dict):
            raise ProviderError(f"the model's arguments for tool {partial.name!r} are not an "
                                "object")
        return ToolCall(partial.id or f"call_{number + 1}", partial.name, args)


_FINISH: dict[str, FinishReason] = {
    "stop": "stop", "length": "length", "tool_calls": "tool-calls", "function_call": "tool-calls",
    "content_filter": "content-filter",
}


def chat_finish_reason(raw: str | None) -> FinishReason | None:
    if raw is None:
        return None
    return _FINISH.get(raw, "other")


def chat_usage(usage: Any) -> Usage:
    """segue's usage from a Chat Completions ``usage`` object.

    ``prompt_tokens`` includes cached tokens (``prompt_tokens_details.cached_tokens``, the
    cache read) and, on models that report it, ``prompt_tokens_details.cache_write_tokens``
    (the cache write); a figure the server leaves out stays ``None``, never 0.
    ``completion_tokens`` includes reasoning by OpenAI's definition; xAI reports
    reasoning apart (its ``total_tokens`` is prompt + completion + reasoning), so there the
    reasoning tokens are added back: both bill them as output."""
    prompt = usage_count(getattr(usage, "prompt_tokens", None))
    completion = usage_count(getattr(usage, "completion_tokens", None))
    total = usage_count(getattr(usage, "total_tokens", None))
    details = getattr(usage, "completion_tokens_details", None)
    reasoning = (
        usage_count(getattr(details, "reasoning_tokens", None)) if details is not None else None
    )
    if (prompt is not None and completion is not None and total is not None and reasoning
            and total == prompt + completion + reasoning):
        completion += reasoning
    prompt_details = getattr(usage, "prompt_tokens_details", None)
    cached = usage_count(getattr(prompt_details, "cached_tokens", None))
    written = usage_count(getattr(prompt_details, "cache_write_tokens", None))
    return Usage(prompt, completion, cache_read_tokens=cached, cache_write_tokens=written)


# -- the provider ------------------------------------------------------------------------------


class OpenAIChatProvider(SdkProvider):
    def __init__(
        self,
        model: str,
        client: OpenAI,
        *,
        context_window: int,
        encoding: str,
        label: str,
        key_env: str | None,
        retry: RetryPolicy | None = None,
        cache_key: bool = False,
    ) -> None:
        super().__init__(model, context_window=context_window, encoding=encoding, retry=retry)
        self._client = client
        self.label = label
        self.key_env = key_env
        #: Send ``prompt_cache_key`` (OpenAI's own API; compatible servers may refuse it).
        self.cache_key = cache_key

    def params(self, request: ProviderRequest) -> dict[str, Any]:
        params: dict[str, Any] = {"messages": chat_messages(request)}
        if request.tools:
            params["tools"] = chat_tools(request.tools)
        key = prompt_cache_key(request) if self.cache_key else None
        if key is not None:
            # As extra body: SDK releases older than the parameter still send it.
            params["extra_body"] = {"prompt_cache_key": key}
        return params

    def _attempt(self, params: dict[str, Any], emit: EventSink) -> StepResult:
        import openai

        assembler = ChatStream(emit)
        extra = dict(params)
        messages = extra.pop("messages")
        try:
            stream = self._client.chat.completions.create(
                model=self._name,
                messages=cast("list[ChatCompletionMessageParam]", messages),
                stream=True,
                stream_options={"include_usage": True},
                **extra,
            )
            feed_all(stream, assembler.feed)
        except openai.APIStatusError as exc:
            in_stream = exc.status_code == 200
            raise self._failure(exc, None if in_stream else exc.status_code,
                                dict(exc.response.headers), in_stream=in_stream) from None
        except openai.APIConnectionError as exc:
            raise classify(ApiFailure(self.label, str(exc), connection=True),
                           key_env=self.key_env) from None
        except openai.APIError as exc:  # an error event inside a 200 stream
            raise self._failure(exc, None, {}, in_stream=True) from None
        except transport_errors() as exc:  # the connection dropped while reading
            raise dropped(self.label, exc, key_env=self.key_env) from None
        return assembler.result()

    def _failure(self, exc: Any, status: int | None, headers: Mapping[str, str], *,
                 in_stream: bool = False) -> ProviderError:
        error_type, code, message = error_fields(exc.body)
        if code is None and isinstance(getattr(exc, "code", None), str):
            code = exc.code
        return classify(
            ApiFailure(self.label, message or str(exc.message), status, error_type, code,
                       headers, in_stream=in_stream),
            key_env=self.key_env,
        )


def prompt_cache_key(request: ProviderRequest) -> str | None:
    """OpenAI's ``prompt_cache_key``: one per workspace and context window, so requests that
    share a prefix are routed to the same cache. A window is named by its first row (the
    lead-in of a rolled-over window, else the window's first message), which every later
    request of that window repeats and a new window never has."""
    if not request.rows:
        return None
    first = request.rows[0]
    seed = f"{first.workspaceId or ''}\x00{first.id}"
    return "segue-" + hashlib.sha256(seed.encode("utf-8")).hexdigest()[:32]


def build(
    model: str,
    *,
    settings: Mapping[str, Any],
    environ: Mapping[str, str],
    context_window: int,
    encoding: str,
    http_client: object | None = None,
    retry: RetryPolicy | None = None,
) -> OpenAIChatProvider:
    """An ``openai:`` or ``openai-compatible:`` provider from the environment and settings.

    UsageError before any request when the key (``openai:``) or the base URL
    (``openai-compatible:``) is missing, or the SDK is not installed."""
    try:
        import openai
    except ImportError:
        raise missing_sdk(model, "OpenAI", "openai") from None
    provider = model.partition(":")[0]
    if provider == "openai":
        key = api_key(environ, OPENAI_KEY_ENV, model=model, vendor="OpenAI", example="sk-…")
        base_url = environ.get(OPENAI_URL_ENV, "").strip() or None
        label, key_env = "OpenAI", OPENAI_KEY_ENV
    else:
        base_url = environ.get(COMPAT_URL_ENV, "").strip() or settings.get(COMPAT_URL_SETTING)
        if not isinstance(base_url, str) or not base_url:
            head = (f"model {model!r} needs the server's base URL: export {COMPAT_URL_ENV}="
                    "http://localhost:11434/v1 or ")
            raise UsageError(
                head + f"set the {COMPAT_URL_SETTING} setting",
                cli=head + f"`segue settings set {COMPAT_URL_SETTING} URL`")
        key = environ.get(COMPAT_KEY_ENV, "").strip() or NO_KEY
        label, key_env = f"the OpenAI-compatible server at {base_url}", COMPAT_KEY_ENV
    client = openai.OpenAI(**client_options(key, base_url, http_client))
    return OpenAIChatProvider(model, client, context_window=context_window, encoding=encoding,
                              label=label, key_env=key_env, retry=retry,
                              cache_key=provider == "openai")
