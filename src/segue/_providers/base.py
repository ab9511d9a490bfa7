"""The Provider protocol: one model step from a prepared request.

A step sends one :class:`~segue._providers.request.ProviderRequest` and returns one
:class:`StepResult`: the assistant's text, the tool calls it made, and the usage the provider
reported. Streaming is optional and observational: ``on_event`` receives
:class:`TextDelta` and :class:`ToolCallEvent` values as they arrive, and the returned result is
always complete (the events add up to it). Retries are bounded and happen only before any
output is streamed (the SDKs' own retries are off), so a caller never sees output twice.

Failures: :class:`~segue._errors.ContextOverflowError` when the provider says the request does
not fit (R17's backstop — the engine handles it), :class:`~segue._errors.ProviderError` for
anything else the provider reports. Both are raised before any event of a failed step is
emitted when the failure is known up front.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from segue._providers.request import ProviderRequest, Reasoning, ToolCall


@dataclass(frozen=True)
class Usage:
    """Token usage of one step; ``None`` where the provider did not say.

    ``input_tokens`` is the whole prompt the model read, cached or not; ``cache_read_tokens``
    and ``cache_write_tokens`` say how much of it was read from / written to the provider's
    prompt cache (both included in ``input_tokens``)."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None

    def to_obj(self) -> dict[str, int]:
        """The ``metadata.usage`` shape of segue rows (absent fields left out).

        One figure, two names: ``cachedInputTokens`` is Xum's key (the AI SDK's
        ``LanguageModelUsage.cachedInputTokens``, what Xum's rows and tools read), and
        ``cacheReadTokens`` is segue's own name for the same number, kept beside
        ``cacheWriteTokens``. Both are already part of ``inputTokens``: a reader takes one
        of them, never their sum, and never adds either to ``inputTokens``."""
        out: dict[str, int] = {}
        if self.input_tokens is not None:
            out["inputTokens"] = self.input_tokens
        if self.output_tokens is not None:
            out["outputTokens"] = self.output_tokens
        if self.cache_read_tokens is not None:
            out["cacheReadTokens"] = self.cache_read_tokens
            out["cachedInputTokens"] = self.cache_read_tokens
        if self.cache_write_tokens is not None:
            out["cacheWriteTokens"] = self.cache_write_tokens
        return out


#: Why a reply ended, in the AI SDK's words (what Xum stores as ``finishReason``).
FinishReason = Literal["stop", "length", "tool-calls", "content-filter", "error", "other"]


@dataclass(frozen=True)
class StepResult:
    """One step's reply.

    ``finish_reason`` is None when the server did not say (some compatible servers never do).
    ``truncated_call`` names the tool whose call the output limit cut off (``finish_reason``
    is then ``"length"``); that call is *not* in ``tool_calls`` and must never run."""

    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = Usage()
    finish_reason: FinishReason | None = None
    truncated_call: str | None = None
    #: Opaque reasoning items to store and send back on later requests (Responses API).
    reasoning: tuple[Reasoning, ...] = ()


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ToolCallEvent:
    call: ToolCall


StreamEvent = TextDelta | ToolCallEvent
EventSink = Callable[[StreamEvent], None]

#: Counts the tokens of a request with the model's real encoding (R17). Injected so that
#: providers which must report usage themselves (the scripted one) count exactly like the
#: engine's guards do.
RequestCounter = Callable[[ProviderRequest], int]


@runtime_checkable
class Provider(Protocol):
    @property
    def model(self) -> str:
        """The ``provider:name`` string this provider was made for."""
        ...

    @property
    def context_window(self) -> int:
        """The model's context limit in tokens."""
        ...

    @property
    def encoding(self) -> str:
        """The tokenizer encoding the guards count this model with (e.g. ``o200k_base``)."""
        ...

    def step(self, request: ProviderRequest, *, on_event: EventSink | None = None) -> StepResult:
        """Send one request and return the complete result."""
        ...
