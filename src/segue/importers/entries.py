"""What another agent's transcript says, in a shape common to every source, and how it becomes
segue rows. Pure: bytes in, rows out; the store is :mod:`segue.importers.apply`'s business.

A source parser turns its lines into a flat list of entries (a session starts, the user
cleared, a message, a tool call, a tool result, a compaction summary). :func:`build_rows`
turns them into rows:

* every row's id is derived from where it came from (``<format>:<source id>``, unique across
  sessions), so a re-import can tell what it already has;
* a tool result is put into the call it answers (a ``dynamic-tool`` part, ``output-available``
  or ``output-error``); a call whose result never came stays ``input-available`` — kept on disk,
  never sent to a provider (SPEC.md §3);
* a clear inside a session becomes a manual reset row; a session start becomes one too when
  anything precedes it and it is not a resumed session that opens by repeating lines the
  workspace has (R11: the floor means what the user did);
* a compaction summary becomes a compaction boundary, as a segue ``/compact`` would write;
* reasoning never reaches an entry (R25); text and tool output longer than
  :data:`MAX_TEXT_CHARS` are cut with a marker, so no row outgrows what look-back reads
  (R24 skips lines over 1 MiB).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from segue.errors import UsageError
from segue.messages import Part, Role, Row, make_row, text_part

#: Longest text or tool output a row keeps (characters); well under R24's 1 MiB line bound
#: even after JSON escaping.
MAX_TEXT_CHARS = 200_000


class ImportRefused(UsageError):
    """A file that is not what ``--from`` says: nothing was imported (exit 2)."""

    code = "import_refused"


@dataclass(frozen=True)
class SessionStart:
    session: str
    ts: int | None


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


@dataclass
class Known:
    """What the target workspace already holds: row ids, imported sessions, whether it has any
    row at all."""

    ids: set[str] = field(default_factory=set)
    sessions: set[str] = field(default_factory=set)
    any_rows: bool = False


def cut(text: str) -> str:
    if len(text) <= MAX_TEXT_CHARS:
        return text
    dropped = len(text) - MAX_TEXT_CHARS
    return text[:MAX_TEXT_CHARS] + f"\n[… {dropped} more characters not imported]"


def iso_ms(value: Any) -> int | None:
    """An ISO-8601 timestamp (``2026-01-02T03:04:05.000Z``) as epoch milliseconds."""
    if not isinstance(value, str):
        return None
    try:
        return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return None


def json_lines(data: bytes, source: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for every non-blank line; any line that is not a JSON object
    refuses the whole file (nothing is imported, as for a Xum file)."""
    for number, raw in enumerate(data.split(b"\n"), start=1):
        line = raw.rstrip(b"\r")
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except (ValueError, RecursionError) as exc:
            raise ImportRefused(f"{source}: line {number} is not JSON ({exc})") from None
        if not isinstance(value, dict):
            raise ImportRefused(f"{source}: line {number} is not a JSON object")
        yield number, value


def refuse(source: str, number: int, what: str) -> ImportRefused:
    return ImportRefused(f"{source}: line {number}: {what}")


def build_rows(fmt: str, entries: Sequence[Entry], known: Known) -> list[Row]:
    """The rows ``entries`` add to a workspace that holds ``known``: only what is new."""
    rows: list[Row] = []
    calls: dict[str, tuple[int, int]] = {}
    session = ""
    any_rows = known.any_rows
    #: The reset a new session opens with, written before its first new row — unless its
    #: first line is one the workspace already has (a resumed session repeating its past
    #: continues that conversation: no floor).
    opening: Row | None = None
    first_of_session = False
    for entry in entries:
        if isinstance(entry, SessionStart):
            session = entry.session
            rid = f"{fmt}:{session}:session"
            fresh = session not in known.sessions and rid not in known.ids
            opening = _reset(rid, fmt, session, entry.ts) if fresh and any_rows else None
            first_of_session = True
            known.sessions.add(session)
            continue
        if isinstance(entry, ToolResult):
            _attach(rows, calls, entry)
            continue
        # Source ids are unique across sessions (Claude Code's uuids survive a resumed
        # session's copy of earlier lines, which then imports once).
        rid = f"{fmt}:{entry.source_id}"
        if first_of_session and rid in known.ids:
            opening = None
        first_of_session = False
        if rid in known.ids:
            continue
        known.ids.add(rid)
        if opening is not None:
            rows.append(opening)
            opening = None
        if isinstance(entry, Clear):
            if any_rows:
                rows.append(_reset(rid, fmt, session, entry.ts))
            continue
        any_rows = True
        meta = _meta(fmt, session, entry.ts)
        if isinstance(entry, Message):
            if entry.model is not None:
                meta["model"] = entry.model
            rows.append(make_row(entry.role, cut(entry.text), id=rid, metadata=meta))
        elif isinstance(entry, Summary):
            epoch = sum(1 for r in rows if r.flag("compactionBoundary")) + 1
            meta.update(compactionBoundary=True, compacted=True, compactionEpoch=epoch)
            rows.append(make_row("assistant", cut(entry.text), id=rid, metadata=meta))
        else:
            if entry.model is not None:
                meta["model"] = entry.model
            parts = [text_part(cut(entry.text))] if entry.text else []
            calls[entry.call_id] = (len(rows), len(parts))
            parts.append(
                Part(
                    type="dynamic-tool",
                    toolCallId=entry.call_id,
                    toolName=entry.name,
                    input=entry.input,
                    state="input-available",
                )
            )
            rows.append(make_row("assistant", id=rid, parts=parts, metadata=meta))
    return rows


def _attach(rows: list[Row], calls: dict[str, tuple[int, int]], result: ToolResult) -> None:
    where = calls.pop(result.call_id, None)
    if where is None:
        return  # its call was imported earlier (a re-import), or never written: nothing to fill
    index, part_index = where
    row = rows[index]
    parts = list(row.parts)
    old = parts[part_index]
    parts[part_index] = Part(
        type="dynamic-tool",
        toolCallId=old.toolCallId,
        toolName=old.toolName,
        input=old.input,
        state="output-error" if result.is_error else "output-available",
        output=cut(result.output),
    )
    rows[index] = Row(id=row.id, role=row.role, parts=tuple(parts), metadata=row.metadata)


def _meta(fmt: str, session: str, ts: int | None) -> dict[str, Any]:
    meta: dict[str, Any] = {"importSource": {"format": fmt, "session": session}}
    if ts is not None:
        meta["timestamp"] = ts
    return meta


def _reset(rid: str, fmt: str, session: str, ts: int | None) -> Row:
    meta = _meta(fmt, session, ts)
    meta.update(contextBoundaryKind="reset", uiVisible=False)
    return make_row("assistant", id=rid, metadata=meta)
