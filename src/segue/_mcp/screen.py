"""Which lines ``segue mcp serve`` answers itself, before the SDK sees them (SPEC.md §9, R38).
Pure: one line of the stdio stream in, a verdict out.

JSON-RPC 2.0 says every request that has an id gets an answer, and an unreadable line gets a
parse error with a null id. The SDK drops what it cannot validate (a lone-surrogate escape in
the arguments, ``"jsonrpc": "1.0"``, ``params`` as a string, a line that is not JSON), and the
client then waits for ever. So each line is screened first:

* not JSON (or nested too deep to read) → ``-32700`` Parse error, id null;
* JSON but not a request object (a batch array, a number, an object with neither ``method``
  nor ``result``/``error``, a wrong ``jsonrpc``, a ``method`` that is not a string, ``params``
  that is not an object, an id that is not a string or integer) → ``-32600`` Invalid Request,
  with the request's id when it has a usable one, else null;
* a request whose params the SDK's own model rejects, or whose strings hold lone surrogates
  (they cannot be written as UTF-8) → ``-32602`` Invalid params, with its id;
* everything else goes to the SDK unchanged. A notification (no id) whose params are bad is
  dropped, as JSON-RPC says: a notification is never answered.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602


@dataclass(frozen=True)
class Reply:
    """Answer this line with an error instead of passing it on."""

    id: str | int | None
    code: int
    message: str


#: What :func:`screen` decides: pass the line on, drop it, or answer it with a :class:`Reply`.
FORWARD = "forward"
DROP = "drop"


def _usable_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _writable(value: Any) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except (UnicodeEncodeError, RecursionError, ValueError):
        return False
    return True


def screen(line: str, validates: Callable[[str], bool]) -> Reply | str:
    """``FORWARD``, ``DROP`` or the :class:`Reply` for one line; ``validates`` is the SDK's own
    check of a message (True when it would accept the line)."""
    if not line.strip():
        return DROP  # blank keep-alive lines are no message
    try:
        obj = json.loads(line)
    except (ValueError, RecursionError):
        return Reply(None, PARSE_ERROR, "Parse error: the line is not JSON")
    if not isinstance(obj, dict):
        what = "a batch (an array)" if isinstance(obj, list) else "not an object"
        return Reply(None, INVALID_REQUEST, f"Invalid Request: the message is {what}")
    has_id = "id" in obj
    ident = obj.get("id")
    answer_to = ident if has_id and _usable_id(ident) else None
    if "method" not in obj:
        if ("result" in obj or "error" in obj) and obj.get("jsonrpc") == "2.0":
            return FORWARD  # a response to a request of the server's
        return Reply(answer_to, INVALID_REQUEST, "Invalid Request: no method")
    problem = None
    if obj.get("jsonrpc") != "2.0":
        problem = 'jsonrpc must be "2.0"'
    elif not isinstance(obj["method"], str) or not _writable(obj["method"]):
        problem = "method must be a string"
    elif has_id and not _usable_id(ident):
        problem = "id must be a string or an integer"
    elif "params" in obj and not isinstance(obj["params"], dict):
        problem = "params must be an object"
    if problem is not None:
        return Reply(answer_to, INVALID_REQUEST, f"Invalid Request: {problem}")
    if not _writable(obj.get("params")):
        if not has_id:
            return DROP
        return Reply(answer_to, INVALID_PARAMS, "Invalid params: a string is not valid Unicode")
    if not validates(line):
        if not has_id:
            return DROP
        return Reply(answer_to, INVALID_PARAMS, "Invalid params: the request does not validate")
    return FORWARD
