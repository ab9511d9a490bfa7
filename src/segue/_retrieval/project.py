"""What the agent may see of a line (R11, R25). Pure.

Every line read by a ``session_history`` page is classified into exactly one of:

* ``FLOOR`` — a manual reset, or anything that *might* be one: a reset row that does not
  strictly validate as a rollover, an unparseable line mentioning the reset key, an oversized
  line or torn tail mentioning it. Damage fails closed (R11): nothing older is ever shown.
* ``BOUNDARY`` — a strict rollover or a compaction boundary: it starts a window, is not an item.
* ``ITEM`` — a row the agent may see, already projected.
* ``SKIP`` — everything else (hidden synthetic rows, quarantined rows, rows whose projection is
  empty, unparseable lines without the reset key, and rows a search pre-filter proved cannot
  match).

Projection (R25): text parts as written; reasoning and provider metadata left out; media
(``file`` parts, media objects in tool output) becomes ``[media omitted]``; earlier
``session_history`` calls and results are left out entirely; other tool calls show as a person
reads them, ``[tool NAME] <input>`` and their output: an input of one text field shows that
text as typed (``[tool bash] ls -la``), one of several shows ``field: value`` lines with
texts as written (real newlines, no JSON escapes); anything else is compact JSON. Parts are
joined with a newline.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from segue._context.boundaries import (
    boundary_kind,
    is_boundary,
    is_ui_hidden,
    item_id,
    window_id_of_boundary,
)
from segue._context.floor import is_floor_line, settled_marker
from segue._history.scan import parse_line
from segue._messages import Part, Row
from segue._retrieval.envelope import char_cost
from segue._retrieval.reader import RawLine

MEDIA_OMITTED = "[media omitted]"
#: ``muxMetadata.type`` of machine-authored rows (besides ``synthetic`` ones)
_MACHINE_TYPES = frozenset({"context-budget-warning"})
TOOL_NAME = "session_history"
#: an item must be addressable by read_item, whose item_id is bounded; longer ids are not items.
#: The bound is on serialized bytes (which also bounds code points): a cursor carries up to two
#: ids (a window's first and last item, or a window id), and ids of escaped or multi-byte
#: characters would otherwise outgrow the cursor's share of the 16 KiB result and MAX_CURSOR.
MAX_ITEM_ID = 256
_MEDIA_TYPES = frozenset(
    {"media", "image", "file", "image-data", "image-url", "file-data", "file-url", "audio"}
)


class Kind(enum.Enum):
    FLOOR = "floor"
    BOUNDARY = "boundary"
    ITEM = "item"
    SKIP = "skip"


@dataclass(frozen=True)
class Item:
    item_id: str
    row_id: str
    role: str
    timestamp: int | None
    text: str
    #: written by segue itself (a budget warning): ranks below people's and the model's text
    machine: bool = False


@dataclass(frozen=True)
class Seen:
    kind: Kind
    #: for FLOOR and BOUNDARY: the id of the window this row starts
    window_id: str | None = None
    #: for FLOOR and BOUNDARY: "reset" | "rollover" | "compaction"
    window_kind: str | None = None
    item: Item | None = None
    row: Row | None = None


def raw_window_id(line: RawLine) -> str:
    """Window id for a floor that is not a parseable row: named by its end position, which is
    stable while any cursor over it is valid (the archive stamp is bound)."""
    return f"w:raw:{line.end}"


def _window_id(row: Row, line: RawLine) -> str:
    return floor_window_id(row, line.end)


def floor_window_id(row: Row | None, end: int) -> str:
    """The id of the window a floor or boundary opens: from its row, or ``w:raw:<end>`` (its
    end position in the history) when the line is not a readable row or the id is too long.
    Public so that other readers of the floor name windows exactly as the tool does."""
    if row is not None:
        wid = window_id_of_boundary(row)
        if _id_fits(wid, MAX_ITEM_ID + 2):
            return wid
    return f"w:raw:{end}"


def _id_fits(ident: str, limit: int) -> bool:
    return len(ident) <= limit and sum(map(char_cost, ident)) <= limit


#: A pre-filter gets the raw bytes of a line and returns True when the line certainly cannot
#: produce a search hit *and* cannot be a boundary, so it need not be parsed.
Prefilter = Callable[[bytes], bool]


_SKIPPED = Seen(Kind.SKIP)


def classify(line: RawLine, prefilter: Prefilter | None = None) -> Seen:
    """What ``line`` is. With ``prefilter``, a line it proves holds no hit is SKIP; so is a
    ``quiet`` line (the reader ran that filter's ``hot`` scan over the line's chunk)."""
    if line.raw is None or not line.complete:
        if line.marker:
            return Seen(Kind.FLOOR, raw_window_id(line), "reset")
        return _SKIPPED
    raw = line.raw
    if prefilter is not None and not line.marker and (line.quiet or prefilter(raw)):
        return _SKIPPED
    row = parse_line(raw)
    if is_floor_line(row, settled_marker(raw, row, line.marker)):
        if row is None:
            return Seen(Kind.FLOOR, raw_window_id(line), "reset")
        return Seen(Kind.FLOOR, _window_id(row, line), "reset", row=row)
    if row is None:
        return Seen(Kind.SKIP)
    if is_boundary(row):
        return Seen(Kind.BOUNDARY, _window_id(row, line), boundary_kind(row), row=row)
    item = project(row)
    if item is None:
        return Seen(Kind.SKIP, row=row)
    return Seen(Kind.ITEM, item=item, row=row)


def is_hidden(row: Row) -> bool:
    """Not an item: rows Xum hides (synthetic without ``uiVisible: true``, compaction
    requests) and quarantined rows (R22, R25)."""
    if row.flag("contextBudgetRejected") or "contextBudgetRejectedMessage" in row.metadata:
        return True
    return is_ui_hidden(row)


def project(row: Row) -> Item | None:
    """The agent's view of a non-boundary row, or None when it is not an item."""
    if is_hidden(row) or is_boundary(row):
        return None
    pieces: list[str] = []
    for part in row.parts:
        pieces.extend(_part_text(part))
    iid = item_id(row)
    if not pieces or not _id_fits(iid, MAX_ITEM_ID):
        return None
    machine = row.flag("synthetic") or row.mux_type in _MACHINE_TYPES
    return Item(iid, row.id, row.role, row.timestamp, "\n".join(pieces), machine)


def _part_text(part: Part) -> list[str]:
    if part.type == "text":
        return [part.text] if part.text else []
    if part.type == "file":
        return [MEDIA_OMITTED]
    if part.type == "dynamic-tool" or part.type.startswith("tool-"):
        name = part.toolName or part.type.removeprefix("tool-")
        if name == TOOL_NAME:
            return []  # earlier results must not be re-fed to the model (R25)
        out = [f"[tool {name}] {input_text(part.input)}"]
        if part.output is not None:
            output = _sanitize(part.output)
            out.append(output if isinstance(output, str) else _json(output))
        elif part.state == "output-error":
            error = part.extra.get("errorText")
            out.append(f"[error] {error}" if isinstance(error, str) else "[error]")
        return out
    # reasoning, step markers, source parts and unknown kinds carry nothing for the agent
    return []


def _sanitize(value: Any) -> Any:
    if isinstance(value, dict):
        kind = value.get("type")
        if isinstance(kind, str) and kind in _MEDIA_TYPES:
            return MEDIA_OMITTED
        if "mediaType" in value and ("data" in value or "url" in value):
            return MEDIA_OMITTED
        return {k: _sanitize(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_sanitize(v) for v in value]
    return value


def input_text(value: Any) -> str:
    """A tool call's input as a person reads it (see the module docstring)."""
    value = _sanitize(value)
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and value:
        if len(value) == 1:
            return _plain(next(iter(value.values())))
        return "\n".join(f"{key}: {_plain(v)}" for key, v in value.items())
    return _json(value)


def _plain(value: Any) -> str:
    return value if isinstance(value, str) else _json(value)


def _json(value: Any) -> str:
    # compact and non-ASCII kept, so it reads like the bytes Xum writes
    return json.dumps(_sanitize(value), ensure_ascii=False, separators=(",", ":"))
