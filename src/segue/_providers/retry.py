"""Bounded retries with exponential backoff for provider calls.

Invariants:

* At most :attr:`RetryPolicy.attempts` tries in all; only a
  :class:`~segue._errors.TransientProviderError` is retried. Everything else (auth, a bad
  request, context overflow) is raised at once: trying again cannot help.
* The SDKs' own retries are switched off (``max_retries=0``) wherever a client is built, so
  every try is counted here and nowhere else.
* A try that already streamed output to the caller is never repeated: the caller has shown
  those deltas, and a second try would show them twice. The error is raised instead.
* The wait is ``base * 2**(n-1)`` capped at ``max_delay``, or exactly the provider's own
  ``Retry-After`` when it sent one no longer than ``max_delay`` (retrying earlier than asked
  only earns another refusal). A longer ask (a daily quota, a long outage) fails at once with
  the wait in the message: a turn does not stall for minutes, and the fallback model, if
  any, gets its chance. ``sleep`` is injectable so tests never wait.
"""

from __future__ import annotations

import email.utils
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from segue._errors import TransientProviderError

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 3
    base_delay: float = 1.0
    max_delay: float = 30.0
    sleep: Callable[[float], None] = time.sleep

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait after failed try number ``attempt`` (1-based)."""
        if retry_after is not None:
            return max(retry_after, 0.0)
        return min(math.ldexp(self.base_delay, attempt - 1), self.max_delay)


def run_with_retries(
    attempt: Callable[[], T], policy: RetryPolicy, *, streamed: Callable[[], bool]
) -> T:
    """Call ``attempt`` until it succeeds, a non-transient error, or the tries run out.

    ``streamed`` says whether the failed try already delivered output to the caller."""
    for number in range(1, policy.attempts + 1):
        try:
            return attempt()
        except TransientProviderError as exc:
            if streamed():
                raise TransientProviderError(
                    f"{exc.message} (the reply had already started streaming, so it was not "
                    "retried)", status=exc.status, retry_after=exc.retry_after) from exc
            if exc.retry_after is not None and exc.retry_after > policy.max_delay:
                raise TransientProviderError(
                    f"{exc.message} (the server asks to wait {describe_wait(exc.retry_after)} "
                    "before trying again; not retried)",
                    status=exc.status, retry_after=exc.retry_after) from exc
            if number == policy.attempts:
                raise TransientProviderError(
                    f"{exc.message} (gave up after {policy.attempts} attempts)",
                    status=exc.status, retry_after=exc.retry_after) from exc
            policy.sleep(policy.delay(number, exc.retry_after))
    raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover


def describe_wait(seconds: float) -> str:
    """``45 s``, ``12 min``, ``3.5 h`` (what a person reads in an error line)."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def retry_after_seconds(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """The wait a response asked for: ``retry-after-ms`` (OpenAI, Anthropic), else
    ``Retry-After`` in seconds or as an HTTP date. None when absent or unreadable."""
    lowered = {k.lower(): v for k, v in headers.items()}
    raw_ms = lowered.get("retry-after-ms")
    if raw_ms is not None:
        try:
            return max(float(raw_ms) / 1000.0, 0.0)
        except ValueError:
            pass  # fall through to Retry-After: a malformed hint is no hint
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    try:
        return max(float(raw), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    current = time.time() if now is None else now
    return max(when.timestamp() - current, 0.0)
