"""Context boundaries and windows: pure functions over rows (SPEC.md §1, R11).

A transcript is cut into context windows by boundary rows:

* a **reset boundary** is any row whose ``metadata.contextBoundaryKind`` is ``"reset"``; it is
  provider-invisible and its window starts *after* it. It is a **rollover** only when it
  strictly validates (:func:`is_strict_rollover`); every other reset row is a **manual reset**,
  and the newest manual reset is the privacy floor. Damage therefore fails closed: a rollover
  row with one bad field becomes a floor, never an ordinary row.
* a **compaction boundary** is an assistant row with ``metadata.compactionBoundary: true``; it
  carries a summary, is provider-visible, and its window starts *at* it.

Window ids are ``w:0`` for the root window and ``w:<itemId of its boundary>`` otherwise, where
an item id is ``str(historySequence)`` or ``m:<row id>`` for a row without a sequence.

Rollover fields (``rolloverId``, ``reason``, ``previousWindowId``, ``contextTokens``,
``maxTokens``) are written by segue inside ``metadata.muxMetadata`` (with ``rolloverId`` also at
``metadata.rolloverId``). Readers accept each field in either place, but where it appears in
both the two must agree; a field found in neither, or with a bad value, fails validation.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from segue.messages import Row

ROOT_WINDOW_ID = "w:0"
ROLLOVER_TYPE = "context-window-rollover"
LEAD_IN_TYPE = "context-window-lead-in"
CONTINUATION_TYPE = "context-window-continuation"
WARNING_TYPE = "context-budget-warning"
ROLLOVER_REASONS: frozenset[str] = frozenset({"on-send", "mid-stream", "context-exceeded"})

WindowKind = Literal["root", "rollover", "reset", "compaction"]
BoundaryKind = Literal["rollover", "reset", "compaction"]

_WINDOW_ID_RE = re.compile(r"w:(0|[0-9]+|m:.+)", re.DOTALL)
_RESET_MARKER = b'"contextBoundaryKind"'
_MISSING = object()


def item_id(row: Row) -> str:
    seq = row.sequence
    return str(seq) if seq is not None else f"m:{row.id}"


def is_reset_row(row: Row) -> bool:
    return row.metadata.get("contextBoundaryKind") == "reset"


def _field(row: Row, name: str) -> Any:
    """A rollover field from muxMetadata or metadata; _MISSING when absent or conflicting."""
    mux = row.metadata.get("muxMetadata")
    in_mux = mux.get(name, _MISSING) if isinstance(mux, dict) else _MISSING
    in_meta = row.metadata.get(name, _MISSING)
    if in_mux is _MISSING:
        return in_meta
    if in_meta is not _MISSING and in_meta != in_mux:
        return _MISSING
    return in_mux


def _is_count(value: Any, *, positive: bool) -> bool:
    if not isinstance(value, int) or isinstance(value, bool):
        return False
    return value > 0 if positive else value >= 0


def is_strict_rollover(row: Row) -> bool:
    """True only for a reset row that is a well-formed automatic rollover boundary (R11)."""
    meta = row.metadata
    if not is_reset_row(row) or row.role != "assistant" or row.parts:
        return False
    if row.mux_type != ROLLOVER_TYPE:
        return False
    if meta.get("partial", False) is not False:
        return False
    if "contextBudgetRejected" in meta or "contextBudgetRejectedMessage" in meta:
        return False
    if meta.get("compactionBoundary", False) is not False:
        return False
    rollover_id = _field(row, "rolloverId")
    if not isinstance(rollover_id, str) or not rollover_id:
        return False
    reason = _field(row, "reason")
    if not isinstance(reason, str) or reason not in ROLLOVER_REASONS:  # a list is unhashable
        return False
    previous = _field(row, "previousWindowId")
    if not isinstance(previous, str) or not _WINDOW_ID_RE.fullmatch(previous):
        return False
    max_tokens = _field(row, "maxTokens")
    context_tokens = _field(row, "contextTokens")
    return _is_count(max_tokens, positive=True) and _is_count(context_tokens, positive=False)


def is_manual_reset(row: Row) -> bool:
    return is_reset_row(row) and not is_strict_rollover(row)


def is_compaction_boundary(row: Row) -> bool:
    return row.role == "assistant" and row.flag("compactionBoundary") and not is_reset_row(row)


def is_boundary(row: Row) -> bool:
    return is_reset_row(row) or is_compaction_boundary(row)


def boundary_kind(row: Row) -> BoundaryKind:
    if is_reset_row(row):
        return "rollover" if is_strict_rollover(row) else "reset"
    if is_compaction_boundary(row):
        return "compaction"
    raise ValueError(f"row {row.id!r} is not a context boundary")


def window_id_of_boundary(row: Row) -> str:
    return f"w:{item_id(row)}"


def raw_may_be_reset(raw: bytes) -> bool:
    """For a line that cannot be parsed (or is too large to parse): could it be a reset row?

    Fails closed: any mention of the boundary key counts, so damage never hides a floor.
    """
    return _RESET_MARKER in raw


@dataclass(frozen=True)
class Window:
    window_id: str
    kind: WindowKind
    boundary: Row | None
    rows: tuple[Row, ...]


def split_windows(rows: Iterable[Row]) -> list[Window]:
    """Cut rows into windows, oldest first. The root window always exists (possibly empty).

    A reset row opens a window without belonging to it; a compaction row opens a window and is
    its first row.
    """
    windows: list[Window] = []
    current_id = ROOT_WINDOW_ID
    current_kind: WindowKind = "root"
    current_boundary: Row | None = None
    current: list[Row] = []

    def close() -> None:
        windows.append(Window(current_id, current_kind, current_boundary, tuple(current)))

    for row in rows:
        if is_boundary(row):
            close()
            current_id = window_id_of_boundary(row)
            current_kind = boundary_kind(row)
            current_boundary = row
            current = [row] if current_kind == "compaction" else []
        else:
            current.append(row)
    close()
    return windows


def newest_floor_index(rows: Sequence[Row]) -> int | None:
    """Index of the newest manual reset (the privacy floor), or None."""
    for index in range(len(rows) - 1, -1, -1):
        if is_manual_reset(rows[index]):
            return index
    return None
