"""From an API's error response to segue's provider errors. Pure.

Both SDKs raise their own exception types; the adapters pull out the few facts that matter
(HTTP status, error ``type`` and ``code``, message, headers) and :func:`classify` decides:

* **context overflow** → :class:`~segue._errors.ContextOverflowError`, the engine's handled
  backstop (R17), never retried and never sent to the fallback model. Recognised from every
  body the servers really send: OpenAI's ``context_length_exceeded`` code; llama.cpp's
  ``exceed_context_size_error`` (in ``type``, with an integer ``code`` and HTTP 400 or 500)
  and its ``Context size has been exceeded.`` (HTTP 500); vLLM's ``The decoder prompt
  (length N) is longer than the maximum model length of M`` and ``maximum context length``
  (DeepSeek words it the same way, with a generic code); Anthropic's ``prompt is too long``
  and ``input length and `max_tokens` exceed context limit``; a 413 from anyone. Those
  phrases count whatever the status (llama.cpp says 500); looser ones ("context window",
  "too many tokens") only on a 400, and never on a 429 (a tokens-per-minute limit).
* **auth** (401) → :class:`~segue._errors.ProviderAuthError` naming the env var to fix.
* **transient** (408, 409, 429 except an exhausted quota, 5xx, Anthropic ``overloaded_error``
  even inside a 200 stream, a lost connection) → :class:`~segue._errors.TransientProviderError`,
  retried by :mod:`segue._providers.retry`.
* anything else → :class:`~segue._errors.ProviderError` with the provider's own message.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from segue._errors import (
    ContextOverflowError,
    ProviderAuthError,
    ProviderError,
    TransientProviderError,
)
from segue._providers.retry import retry_after_seconds

_OVERFLOW_CODES = frozenset({"context_length_exceeded", "string_above_max_length",
                             "exceed_context_size_error", "request_too_large"})
#: Phrases only an overflow reply uses: they count at any status (llama.cpp answers 500).
_OVERFLOW_TEXT = re.compile(
    r"prompt is too long|maximum context length|context[_ ]length[_ ]exceeded"
    r"|exceeds? the (available )?context( size| window)?|exceed context limit"
    r"|context size has been exceeded|longer than the maximum model length"
    r"|maximum model length",
    re.IGNORECASE,
)
#: Looser phrases: an overflow only when the server also says the request was bad (400).
_OVERFLOW_TEXT_400 = re.compile(r"too many tokens|context window", re.IGNORECASE)
_TRANSIENT_TYPES = frozenset({"overloaded_error", "rate_limit_error", "api_error",
                              "server_error", "timeout_error"})
#: OpenAI answers 429 for a spent quota too; waiting does not refill it.
_NOT_TRANSIENT_CODES = frozenset({"insufficient_quota", "billing_hard_limit_reached"})


@dataclass(frozen=True)
class ApiFailure:
    """What an adapter read from an SDK exception."""

    label: str  # "OpenAI", "Anthropic", "the OpenAI-compatible server at …"
    message: str
    status: int | None = None
    error_type: str | None = None
    code: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    connection: bool = False  # no response at all (refused, reset, timed out)
    #: The error arrived as an event inside a 200 stream (its status says nothing).
    in_stream: bool = False


def classify(failure: ApiFailure, *, key_env: str | None) -> ProviderError:
    f = failure
    said = f"{f.label}: {f.message}" if f.message else f.label
    if f.connection:
        return TransientProviderError(f"could not reach {f.label}: {f.message}")
    if _is_overflow(f):
        return ContextOverflowError(f"{said} (the request does not fit the model's context)")
    if f.status == 401:
        fix = (f"; set {key_env} to a valid key" if key_env is not None
               else "; the server wants an API key")
        return ProviderAuthError(f"{f.label} rejected the API key (401){fix}", env_var=key_env)
    if f.code in _NOT_TRANSIENT_CODES:
        return ProviderError(f"{said} (quota exhausted; check the account's plan and billing)")
    where = ("sent inside the reply stream" if f.in_stream
             else f"HTTP {f.status}" if f.status else None)
    if (f.status in (408, 409, 429) or (f.status is not None and f.status >= 500)
            or f.error_type in _TRANSIENT_TYPES):
        return TransientProviderError(
            f"{said} ({where})" if where else said,
            status=f.status,
            retry_after=retry_after_seconds(f.headers),
        )
    if f.status == 404:
        return ProviderError(f"{said} (HTTP 404: check the model name)")
    return ProviderError(f"{said} ({where})" if where else said)


def _is_overflow(f: ApiFailure) -> bool:
    if f.status == 429:
        return False  # "too many tokens per minute" is a rate limit, not a size
    if f.code in _OVERFLOW_CODES or f.error_type in _OVERFLOW_CODES:
        return True
    if f.status == 413 or _OVERFLOW_TEXT.search(f.message) is not None:
        return True
    return f.status == 400 and _OVERFLOW_TEXT_400.search(f.message) is not None


def error_fields(body: object) -> tuple[str | None, str | None, str | None]:
    """``(type, code, message)`` from an error body: OpenAI's SDK hands over the inner
    ``error`` object, Anthropic's the whole ``{"type": "error", "error": {…}}``."""
    if not isinstance(body, dict):
        return None, None, None
    inner = body.get("error")
    obj = inner if isinstance(inner, dict) else body

    def text(key: str) -> str | None:
        value = obj.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)  # llama.cpp and vLLM put the HTTP status in ``code``
        return value if isinstance(value, str) and value else None

    return text("type"), text("code"), text("message")
