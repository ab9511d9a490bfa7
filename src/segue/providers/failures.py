"""From an API's error response to segue's provider errors. Pure.

Both SDKs raise their own exception types; the adapters pull out the few facts that matter
(HTTP status, error ``type`` and ``code``, message, headers) and :func:`classify` decides:

* **context overflow** → :class:`~segue.errors.ContextOverflowError`, the engine's handled
  backstop (R17): OpenAI's ``context_length_exceeded`` code or a 400 saying the context
  length was exceeded (vLLM and llama.cpp servers word it the same way); Anthropic's 400
  ``prompt is too long``; a 413 ``request_too_large`` from either.
* **auth** (401) → :class:`~segue.errors.ProviderAuthError` naming the env var to fix.
* **transient** (408, 409, 429 except an exhausted quota, 5xx, Anthropic ``overloaded_error``
  even inside a 200 stream, a lost connection) → :class:`~segue.errors.TransientProviderError`,
  retried by :mod:`segue.providers.retry`.
* anything else → :class:`~segue.errors.ProviderError` with the provider's own message.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from segue.errors import (
    ContextOverflowError,
    ProviderAuthError,
    ProviderError,
    TransientProviderError,
)
from segue.providers.retry import retry_after_seconds

_OVERFLOW_CODES = frozenset({"context_length_exceeded", "string_above_max_length",
                             "exceed_context_size_error", "request_too_large"})
_OVERFLOW_TEXT = re.compile(
    r"prompt is too long|maximum context length|context[_ ]length[_ ]exceeded"
    r"|exceeds? the (available )?context( size| window)?|too many tokens|context window",
    re.IGNORECASE,
)
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
    if (f.status in (408, 409, 429) or (f.status is not None and f.status >= 500)
            or f.error_type in _TRANSIENT_TYPES):
        return TransientProviderError(
            f"{said} (HTTP {f.status})" if f.status else said,
            status=f.status,
            retry_after=retry_after_seconds(f.headers),
        )
    if f.status == 404:
        return ProviderError(f"{said} (HTTP 404: check the model name)")
    return ProviderError(f"{said} (HTTP {f.status})" if f.status else said)


def _is_overflow(f: ApiFailure) -> bool:
    if f.code in _OVERFLOW_CODES or f.error_type in ("request_too_large",):
        return True
    if f.status == 413:
        return True
    return f.status == 400 and _OVERFLOW_TEXT.search(f.message) is not None


def error_fields(body: object) -> tuple[str | None, str | None, str | None]:
    """``(type, code, message)`` from an error body: OpenAI's SDK hands over the inner
    ``error`` object, Anthropic's the whole ``{"type": "error", "error": {…}}``."""
    if not isinstance(body, dict):
        return None, None, None
    inner = body.get("error")
    obj = inner if isinstance(inner, dict) else body

    def text(key: str) -> str | None:
        value = obj.get(key)
        return value if isinstance(value, str) and value else None

    return text("type"), text("code"), text("message")
