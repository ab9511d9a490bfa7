"""The scripted provider's file format (SPEC.md §5), parsed into pure values.

::

    {"contextWindow": 128000,
     "encoding": "o200k_base",
     "requestLog": "requests.jsonl",
     "responses": [
        {"text": "Looking.", "toolCalls": [{"name": "bash", "input": {"cmd": "ls"}}]},
        {"text": "Done.", "usage": {"inputTokens": 900, "outputTokens": 12}},
        {"error": {"kind": "context_overflow", "message": "prompt is too long"}}
     ]}

* ``contextWindow`` (required, > 0) is the model limit the engine budgets against.
* ``encoding`` (required) names the tokenizer the engine counts this model with
  (``o200k_base`` or ``cl100k_base``); the token counter refuses a script without one, so the
  script is refused at load time with the same message rather than at the first count.
* ``requestLog`` (optional) is a path, relative to the script's own directory when relative,
  so a script and its log travel together.
* A response has ``text`` (default ``""``), ``toolCalls`` (each ``name``, ``input`` object,
  optional ``id``; default ids are ``call_<step>_<n>``, unique across the script) and an
  optional ``usage`` (``inputTokens``/``outputTokens``, or ``input_tokens``/``output_tokens``;
  other usage fields are ignored). A missing count is measured from the actual request.
* An **error entry** ``{"error": {"kind": "context_overflow" | "provider", "message"?}}`` makes
  that step fail with :class:`~segue._errors.ContextOverflowError` or
  :class:`~segue._errors.ProviderError`, so tests can drive the engine's overflow backstop.

Unknown keys are refused (with the allowed ones named): a misspelt ``tool_calls`` silently
meaning "no tool calls" would make a test pass for the wrong reason.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from segue._errors import ScriptError
from segue._tokens.encodings import ENCODING_NAMES

_TOP_KEYS = frozenset({"contextWindow", "encoding", "responses", "requestLog"})
_RESPONSE_KEYS = frozenset({"text", "toolCalls", "usage"})
_CALL_KEYS = frozenset({"name", "input", "id"})
_ERROR_KINDS = ("context_overflow", "provider")
Fail = Callable[[str], ScriptError]
_USAGE_ALIASES = {"inputTokens": "input_tokens", "outputTokens": "output_tokens"}


@dataclass(frozen=True)
class ScriptedCall:
    name: str
    input: Mapping[str, Any] = field(hash=False)
    id: str | None = None


@dataclass(frozen=True)
class ScriptedResponse:
    text: str
    tool_calls: tuple[ScriptedCall, ...]
    input_tokens: int | None = None
    output_tokens: int | None = None


@dataclass(frozen=True)
class ScriptedError:
    kind: Literal["context_overflow", "provider"]
    message: str


ScriptEntry = ScriptedResponse | ScriptedError


@dataclass(frozen=True)
class Script:
    path: Path
    context_window: int
    encoding: str
    entries: tuple[ScriptEntry, ...]
    request_log: Path | None


def parse_script(obj: Any, path: Path) -> Script:
    """Validate a decoded script; ScriptError names the file and the offending place."""

    def fail(message: str) -> ScriptError:
        return ScriptError(message, path=path)

    if not isinstance(obj, dict):
        raise fail("the script must be a JSON object")
    _no_unknown(obj, _TOP_KEYS, "the script", fail)
    window = obj.get("contextWindow")
    if not isinstance(window, int) or isinstance(window, bool) or window <= 0:
        raise fail(f"contextWindow must be a positive integer, not {window!r}")
    encoding = obj.get("encoding")
    if encoding not in ENCODING_NAMES:
        names = ", ".join(repr(n) for n in ENCODING_NAMES)
        raise fail(f"encoding must be one of {names}, not {encoding!r}")
    assert isinstance(encoding, str)  # narrowed by the membership test
    responses = obj.get("responses")
    if not isinstance(responses, list):
        raise fail("responses must be a list")
    log = obj.get("requestLog")
    if log is not None and (not isinstance(log, str) or not log):
        raise fail(f"requestLog must be a path, not {log!r}")
    entries = tuple(_entry(raw, n, fail) for n, raw in enumerate(responses, start=1))
    return Script(
        path=path,
        context_window=window,
        encoding=encoding,
        entries=entries,
        request_log=(path.parent / log) if isinstance(log, str) else None,
    )


def _no_unknown(obj: Mapping[str, Any], allowed: frozenset[str], where: str, fail: Fail) -> None:
    unknown = sorted(set(obj) - allowed)
    if unknown:
        raise fail(f"{where}: unknown key(s) {', '.join(unknown)}; "
                   f"allowed: {', '.join(sorted(allowed))}")


def _entry(raw: Any, number: int, fail: Fail) -> ScriptEntry:
    where = f"response {number}"
    if not isinstance(raw, dict):
        raise fail(f"{where} must be an object")
    if "error" in raw:
        if len(raw) != 1:
            raise fail(f"{where}: an error entry has only the 'error' key")
        error = raw["error"]
        if not isinstance(error, dict) or error.get("kind") not in _ERROR_KINDS:
            raise fail(f"{where}: error must be {{\"kind\": \"context_overflow\"|\"provider\", "
                       "\"message\"?: str}")
        _no_unknown(error, frozenset({"kind", "message"}), f"{where} error", fail)
        kind = error["kind"]
        message = error.get("message", f"scripted {kind.replace('_', ' ')} error")
        if not isinstance(message, str):
            raise fail(f"{where}: error message must be a string")
        return ScriptedError("context_overflow" if kind == "context_overflow" else "provider",
                             message)
    _no_unknown(raw, _RESPONSE_KEYS, where, fail)
    text = raw.get("text", "")
    if not isinstance(text, str):
        raise fail(f"{where}: text must be a string")
    raw_calls = raw.get("toolCalls", [])
    if not isinstance(raw_calls, list):
        raise fail(f"{where}: toolCalls must be a list")
    calls = tuple(_call(c, f"{where} toolCalls[{i}]", fail) for i, c in enumerate(raw_calls))
    counts = _usage(raw.get("usage"), where, fail)
    return ScriptedResponse(text, calls, counts.get("input_tokens"), counts.get("output_tokens"))


def _call(raw: Any, where: str, fail: Fail) -> ScriptedCall:
    if not isinstance(raw, dict):
        raise fail(f"{where} must be an object")
    _no_unknown(raw, _CALL_KEYS, where, fail)
    name, args, call_id = raw.get("name"), raw.get("input", {}), raw.get("id")
    if not isinstance(name, str) or not name:
        raise fail(f"{where}: name must be a non-empty string")
    if not isinstance(args, dict):
        raise fail(f"{where}: input must be an object")
    if call_id is not None and (not isinstance(call_id, str) or not call_id):
        raise fail(f"{where}: id must be a non-empty string")
    return ScriptedCall(name, args, call_id)


def _usage(raw: Any, where: str, fail: Fail) -> dict[str, int]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise fail(f"{where}: usage must be an object")
    out: dict[str, int] = {}
    for key, value in raw.items():
        canonical = _USAGE_ALIASES.get(key, key)
        if canonical not in ("input_tokens", "output_tokens"):
            continue  # totalTokens, cachedInputTokens, …: not used by the engine
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise fail(f"{where}: usage {key} must be a non-negative integer")
        if canonical in out and out[canonical] != value:
            raise fail(f"{where}: usage gives {canonical} twice with different values")
        out[canonical] = value
    return out
