"""What another agent's transcript says, in a shape common to every source. Pure.

A source parser turns its lines into a flat list of entries: a session (or one of its
sub-agents) starts, the user cleared, a message, a tool call, a tool result, a compaction
summary. :mod:`segue._importers.rows` turns them into segue rows.

Everything an entry holds is already bounded: reasoning never reaches an entry (R25), and
text, tool output and tool input longer than :data:`MAX_TEXT_CHARS` are cut with a marker
(:func:`cut`, :func:`cap_input`), so no row outgrows what look-back reads (R24 skips lines over
1 MiB).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from segue._errors import SegueError, UsageError
from segue._messages import Part, Role

#: Longest text, tool output or tool input (as JSON) a row keeps, in characters; well under
#: R24's 1 MiB line bound even after JSON escaping.
MAX_TEXT_CHARS = 200_000
#: Deepest nesting a tool input keeps as JSON; a deeper one is kept as its text.
MAX_INPUT_DEPTH = 64
MEDIA = "[media omitted]"


class ImportRefused(UsageError):
    """A file that is not what ``--from`` says: nothing was imported (exit 2)."""

    code = "import_refused"


class NoConversation(SegueError):
    """Files that hold no conversation of the format asked for (another agent's format, or
    only bookkeeping): nothing was imported (exit 1), and the message names what was found."""

    code = "no_conversation"


@dataclass(frozen=True)
class SessionStart:
    """The entries that follow belong to ``session`` (a sub-agent of it when ``agent`` is
    set), read from ``source`` (a file name, for the lead-in)."""

    session: str
    ts: int | None
    agent: str | None = None
    source: str = ""


@dataclass(frozen=True)
class Clear:
    source_id: str
    ts: int | None


@dataclass(frozen=True)
class Message:
    source_id: str
    role: Role
    text: str
    ts: int | None
    model: str | None = None


@dataclass(frozen=True)
class ToolCall:
    source_id: str
    call_id: str
    name: str
    input: Any
    ts: int | None
    model: str | None = None
    text: str = ""


@dataclass(frozen=True)
class ToolResult:
    call_id: str
    output: str
    is_error: bool


@dataclass(frozen=True)
class Summary:
    source_id: str
    text: str
    ts: int | None


Entry = SessionStart | Clear | Message | ToolCall | ToolResult | Summary


def cut(text: str) -> str:
    if len(text) <= MAX_TEXT_CHARS:
        return text
    dropped = len(text) - MAX_TEXT_CHARS
    return text[:MAX_TEXT_CHARS] + f"\n[… {dropped} more characters not imported]"


def cap_input(value: Any) -> Any:
    """A tool call's input as a row keeps it: as it is, or — when its JSON is longer than
    :data:`MAX_TEXT_CHARS` or nested deeper than :data:`MAX_INPUT_DEPTH` — its JSON text,
    cut (``{"inputNotImported": reason, "text": …}``)."""
    if _depth(value) > MAX_INPUT_DEPTH:
        why = f"nested deeper than {MAX_INPUT_DEPTH} levels"
    else:
        try:
            text = json.dumps(value, ensure_ascii=False)
        except (TypeError, ValueError, RecursionError):
            return {"inputNotImported": "not JSON"}
        if len(text) <= MAX_TEXT_CHARS:
            return value
        return {"inputNotImported": "too long", "text": cut(text)}
    return {"inputNotImported": why, "text": cut(_flat_text(value))}


def _depth(value: Any) -> int:
    """How deeply ``value`` nests lists and objects (iteratively: any depth is safe)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children: Iterable[Any] = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, level)
        if deepest > MAX_INPUT_DEPTH:
            return deepest
        stack.extend((child, level + 1) for child in children)
    return deepest


def _flat_text(value: Any) -> str:
    """The strings and numbers inside ``value``, in order, without recursion."""
    out: list[str] = []
    stack: list[Any] = [value]
    while stack and sum(map(len, out)) <= MAX_TEXT_CHARS:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))
        elif item is not None:
            out.append(str(item))
    return " ".join(out)


def error_output(text: str) -> dict[str, Any]:
    """A failed tool call's result as Xum stores one: the call settled
    (``output-available``), its output saying it failed."""
    return {"success": False, "error": text}


def settled(call_id: str, name: str, value: Any, output: str, failed: bool) -> Part:
    """A tool call with its result, in Xum's vocabulary (SPEC.md §3)."""
    return Part(
        type="dynamic-tool",
        toolCallId=call_id,
        toolName=name,
        input=value,
        state="output-available",
        output=error_output(cut(output)) if failed else cut(output),
    )


def iso_ms(value: Any) -> int | None:
    """An ISO-8601 timestamp (``2026-01-02T03:04:05.000Z``) as epoch milliseconds."""
    if not isinstance(value, str):
        return None
    try:
        return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return None


def json_lines(
    data: bytes | Iterable[bytes], source: str
) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for every non-blank line of ``data`` (bytes, or its lines);
    any line that is not a JSON object refuses the whole file (nothing is imported, as for a
    Xum file)."""
    raw_lines = data.split(b"\n") if isinstance(data, bytes) else data
    for number, raw in enumerate(raw_lines, start=1):
        line = raw.rstrip(b"\r")
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except RecursionError:
            raise ImportRefused(f"{source}: line {number} is nested too deeply") from None
        except ValueError as exc:  # UnicodeDecodeError included
            raise ImportRefused(f"{source}: line {number} is not JSON ({exc})") from None
        if not isinstance(value, dict):
            raise ImportRefused(f"{source}: line {number} is not a JSON object")
        yield number, value


def refuse(source: str, number: int, what: str) -> ImportRefused:
    return ImportRefused(f"{source}: line {number}: {what}")
