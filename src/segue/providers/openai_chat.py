"""``openai:`` and ``openai-compatible:`` models through the official SDK's Chat Completions
API, streamed. Needs the optional extra: ``pip install 'segue[openai]'``.

Translation (from :func:`~segue.providers.request.to_messages`, after
:func:`~segue.providers.wire.complete_tool_pairs`):

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
ends. Usage comes from the final chunk (``stream_options.include_usage``): ``prompt_tokens``
(cached tokens included) in, ``completion_tokens`` (reasoning included) out.

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

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from segue.errors import ProviderError, UsageError
from segue.providers.base import EventSink, StepResult, TextDelta, ToolCallEvent, Usage
from segue.providers.failures import ApiFailure, classify, error_fields
from segue.providers.request import (
    Media,
    Message,
    ProviderRequest,
    Text,
    ToolCall,
    ToolResult,
    to_messages,
)
from segue.providers.retry import RetryPolicy, run_with_retries
from segue.providers.sdk_base import SdkProvider
from segue.providers.wire import complete_tool_pairs, inline_text_media, tool_output_text

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
        message = inline_text_media(pending)
        if message.role == "assistant":
            out.append(_assistant(message))
        elif message.role == "system":
            out.append({"role": "system", "content": _only_text(message)})
        else:
            out.extend(_user(message))
    return out


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
    """Folds ``ChatCompletionChunk`` values into a :class:`StepResult`, emitting text."""

    def __init__(self, emit: EventSink) -> None:
        self._emit = emit
        self._text: list[str] = []
        self._calls: dict[int, _PartialCall] = {}
        self.input_tokens: int | None = None
        self.output_tokens: int | None = None
        self.finish_reason: str | None = None

    def feed(self, chunk: ChatCompletionChunk) -> None:
        if chunk.usage is not None:
            self.input_tokens = chunk.usage.prompt_tokens
            self.output_tokens = chunk.usage.completion_tokens
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
        calls = tuple(self._call(n, self._calls[i]) for n, i in enumerate(sorted(self._calls)))
        for call in calls:
            self._emit(ToolCallEvent(call))
        return StepResult("".join(self._text), calls,
                          Usage(self.input_tokens, self.output_tokens))

    def _call(self, number: int, partial: _PartialCall) -> ToolCall:
        raw = "".join(partial.arguments)
        if not partial.name:
            raise ProviderError("the model streamed a tool call without a name")
        try:
            args = json.loads(raw) if raw.strip() else {}
        except ValueError as exc:
            cut = " (the reply hit its length limit)" if self.finish_reason == "length" else ""
            raise ProviderError(
                f"the model's arguments for tool {partial.name!r} are not valid JSON{cut}: {exc}"
            ) from None
        if not isinstance(args, dict):
            raise ProviderError(f"the model's arguments for tool {partial.name!r} are not an "
                                "object")
        return ToolCall(partial.id or f"call_{number + 1}", partial.name, args)


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
    ) -> None:
        super().__init__(model, context_window=context_window, encoding=encoding, retry=retry)
        self._client = client
        self.label = label
        self.key_env = key_env

    def step(self, request: ProviderRequest, *, on_event: EventSink | None = None) -> StepResult:
        # Translated once: every retry sends the same body.
        messages = chat_messages(request)
        tools = chat_tools(request.tools)
        streamed = False

        def emit(event: TextDelta | ToolCallEvent) -> None:
            nonlocal streamed
            streamed = True
            if on_event is not None:
                on_event(event)

        return run_with_retries(lambda: self._attempt(messages, tools, emit), self.retry,
                                streamed=lambda: streamed)

    def _attempt(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], emit: EventSink
    ) -> StepResult:
        import openai

        extra: dict[str, Any] = {"tools": tools} if tools else {}
        assembler = ChatStream(emit)
        try:
            stream = self._client.chat.completions.create(
                model=self._name,
                messages=cast("list[ChatCompletionMessageParam]", messages),
                stream=True,
                stream_options={"include_usage": True},
                **extra,
            )
            with stream:
                for chunk in stream:
                    assembler.feed(chunk)
        except openai.APIStatusError as exc:
            raise self._failure(exc, exc.status_code, dict(exc.response.headers)) from None
        except openai.APIConnectionError as exc:
            raise classify(ApiFailure(self.label, str(exc), connection=True),
                           key_env=self.key_env) from None
        except openai.APIError as exc:  # an error event inside a 200 stream
            raise self._failure(exc, None, {}) from None
        return assembler.result()

    def _failure(self, exc: Any, status: int | None, headers: Mapping[str, str]) -> ProviderError:
        error_type, code, message = error_fields(exc.body)
        if code is None and isinstance(getattr(exc, "code", None), str):
            code = exc.code
        return classify(
            ApiFailure(self.label, message or str(exc.message), status, error_type, code,
                       headers),
            key_env=self.key_env,
        )


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
        raise UsageError(f"model {model!r} needs the OpenAI SDK: pip install 'segue[openai]'"
                         ) from None
    provider = model.partition(":")[0]
    if provider == "openai":
        key = environ.get(OPENAI_KEY_ENV, "").strip()
        if not key:
            raise UsageError(f"model {model!r} needs an OpenAI API key: "
                             f"export {OPENAI_KEY_ENV}=sk-…")
        base_url = environ.get(OPENAI_URL_ENV, "").strip() or None
        label, key_env = "OpenAI", OPENAI_KEY_ENV
    else:
        base_url = environ.get(COMPAT_URL_ENV, "").strip() or settings.get(COMPAT_URL_SETTING)
        if not isinstance(base_url, str) or not base_url:
            raise UsageError(
                f"model {model!r} needs the server's base URL: export {COMPAT_URL_ENV}="
                f"http://localhost:11434/v1 or `segue settings set {COMPAT_URL_SETTING} URL`")
        key = environ.get(COMPAT_KEY_ENV, "").strip() or NO_KEY
        label, key_env = f"the OpenAI-compatible server at {base_url}", COMPAT_KEY_ENV
    options: dict[str, Any] = {"api_key": key, "base_url": base_url,
                               # Retries are counted once, by segue.providers.retry.
                               "max_retries": 0}
    if http_client is not None:
        options["http_client"] = http_client
    client = openai.OpenAI(**options)
    return OpenAIChatProvider(model, client, context_window=context_window, encoding=encoding,
                              label=label, key_env=key_env, retry=retry)
