"""What a person sees of one row: the display projection used by ``segue history`` and exports.

This is the user's own data, so unlike the agent's projection (R25) nothing is withheld for
privacy. It differs from the stored row only where showing the stored form would mislead:

* reasoning parts and provider metadata are left out (they are not part of the conversation);
* media (``file`` parts) becomes ``[media omitted]``: exports stay text and self-contained;
* a tool call shows as ``[tool NAME] {input}`` followed by its output, if any;
* a quarantined row (R22) is shown from ``metadata.contextBudgetRejectedMessage`` with its
  original role, marked as rejected (or, for a failed send's message, as not sent again),
  because the outer row is an empty placeholder;
* rows Xum hides (``synthetic`` without ``uiVisible: true``, such as the lead-in, the
  synthetic continuation and hidden file snapshots; compaction requests), other
  ``uiVisible: false`` rows, reset boundaries and empty assistant rows are hidden (R9, R25):
  they are machinery, and the windows view shows boundaries as dividers;
* machine-authored rows (budget warnings) are labelled ``segue``, never shown as the human's
  words (R9). The human's message that triggered a rollover carries Xum's
  ``context-window-continuation`` tag but is not synthetic: it is labelled ``user``.

Everything here is pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from segue._context.boundaries import (
    LEAD_IN_TYPE,
    ROLLOVER_TYPE,
    WARNING_TYPE,
    is_reset_row,
    is_ui_hidden,
)
from segue._errors import RowDecodeError
from segue._messages import Part, Role, Row, encode_obj, row_from_obj

SegmentKind = Literal["text", "tool", "output", "media", "note"]

ROLES_IN_ORDER: tuple[Role, ...] = ("user", "assistant", "system")
MEDIA_OMITTED = "[media omitted]"
REJECTED_NOTE = "[rejected: this input did not fit the context window and was never sent]"


@dataclass(frozen=True)
class Segment:
    """One displayable piece of a row. ``note`` segments are segue's own annotations."""

    kind: SegmentKind
    text: str


@dataclass(frozen=True)
class Display:
    """A row as a person sees it."""

    role: Role
    label: str  # "user", "assistant", "system" or "segue" (machine-authored)
    rejected: bool
    segments: tuple[Segment, ...]

    @property
    def text(self) -> str:
        return "\n".join(s.text for s in self.segments)


def is_hidden(row: Row) -> bool:
    """Rows a person never sees as items (boundaries are shown as dividers instead)."""
    if is_reset_row(row):
        return True
    if row.flag("contextBudgetRejected"):
        return False
    if is_ui_hidden(row) or row.metadata.get("uiVisible") is False:
        return True
    return row.role == "assistant" and not row.parts


def _tool_segments(part: Part) -> list[Segment]:
    name = part.toolName or "?"
    out = [Segment("tool", f"[tool {name}] {encode_obj(part.input).decode('utf-8')}")]
    if part.output is not None:
        output = part.output if isinstance(part.output, str) else _json_text(part.output)
        out.append(Segment("output", output))
    elif part.state == "output-error":
        error = part.extra.get("errorText")
        out.append(Segment("output", f"[error] {error}" if isinstance(error, str) else "[error]"))
    return out


def _json_text(value: Any) -> str:
    return encode_obj(value).decode("utf-8")


def part_segments(parts: Sequence[Part]) -> list[Segment]:
    segments: list[Segment] = []
    for part in parts:
        if part.type == "text" and part.text:
            segments.append(Segment("text", part.text))
        elif part.type == "dynamic-tool" or part.type.startswith("tool-"):
            segments.extend(_tool_segments(part))
        elif part.type == "file":
            segments.append(Segment("media", MEDIA_OMITTED))
        # reasoning, step markers and other machinery parts are not conversation text
    return segments


def rejected_note(row: Row) -> str:
    """Why a quarantined row was never sent (or never sent again)."""
    failure = row.metadata.get("sendFailure")  # segue._history.quarantine.SEND_FAILURE_KEY
    if isinstance(failure, str):
        return f"[no answer: the model failed ({failure}); kept here, never sent again]"
    return REJECTED_NOTE


def _rejected_original(row: Row) -> tuple[Role, list[Segment]]:
    original = row.metadata.get("contextBudgetRejectedMessage")
    note = rejected_note(row)
    if not isinstance(original, Mapping):
        return row.role, [Segment("note", note + " (original not recorded)")]
    shown_role = _as_role(original.get("role"), row.role)
    raw_parts = original.get("parts", [])
    try:
        parts = row_from_obj({"id": row.id, "role": shown_role, "parts": raw_parts}).parts
    except RowDecodeError:
        # A damaged original is shown as what it is rather than hidden (the user's data).
        return shown_role, [
            Segment("note", note),
            Segment("text", _json_text(raw_parts)),
        ]
    return shown_role, [Segment("note", note), *part_segments(parts)]


def _as_role(value: object, default: Role) -> Role:
    for role in ROLES_IN_ORDER:
        if value == role:
            return role
    return default


_MACHINE_TYPES = frozenset({LEAD_IN_TYPE, ROLLOVER_TYPE, WARNING_TYPE})


def _is_machine(row: Row) -> bool:
    return row.flag("synthetic") or row.mux_type in _MACHINE_TYPES


def display(row: Row) -> Display:
    """The person-facing projection of a row (call :func:`is_hidden` first to skip rows)."""
    if row.flag("contextBudgetRejected"):
        role, segments = _rejected_original(row)
        return Display(role=role, label=role, rejected=True, segments=tuple(segments))
    segments = part_segments(row.parts)
    if row.flag("compactionBoundary"):
        segments.insert(0, Segment("note", "[summary of the earlier conversation]"))
    label = "segue" if _is_machine(row) else row.role
    return Display(role=row.role, label=label, rejected=False, segments=tuple(segments))
