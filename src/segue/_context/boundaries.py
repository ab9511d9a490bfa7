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

Rollover fields (``rolloverId``, ``reason``, ``previousWindowId``, ``flushOpportunity``,
``contextTokens``, ``maxTokens``, optional ``requestedBy``) live in ``metadata.muxMetadata``,
as Xum writes and validates them (SPEC.md §3); segue mirrors ``rolloverId`` at the top of
``metadata``, but readers take muxMetadata's. A field missing there, or with a bad value,
fails validation, and the row is a manual reset.

A compaction boundary is one only with Xum's ``compacted`` (``true`` or one of its reasons)
and a positive integer ``compactionEpoch``; without them the row is an ordinary row.

Three rows carry continuation marks, and only one is synthetic: the human's message that
triggered a rollover is tagged ``muxMetadata.type: "context-window-continuation"`` (it stays
the human's words), while the synthetic continuation is ``{type: "normal",
contextBudgetContinuation: true}`` with ``synthetic: true``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from segue._messages import Row

ROOT_WINDOW_ID = "w:0"
ROLLOVER_TYPE = "context-window-rollover"
LEAD_IN_TYPE = "context-window-lead-in"
CONTINUATION_TYPE = "context-window-continuation"
WARNING_TYPE = "context-budget-warning"
COMPACTION_REQUEST_TYPE = "compaction-request"
#: muxMetadata flag of the synthetic continuation (its type is "normal")
CONTINUATION_FLAG = "contextBudgetContinuation"
#: ``compacted`` is ``true`` or one of these (a bare ``1`` is not ``true``)
COMPACTED_REASONS: frozenset[str] = frozenset({"user", "idle", "heartbeat"})
ROLLOVER_REASONS: frozenset[str] = frozenset({"on-send", "mid-stream", "context-exceeded"})

WindowKind = Literal["root", "rollover", "reset", "compaction"]
BoundaryKind = Literal["rollover", "reset", "compaction"]

_WINDOW_ID_RE = re.compile(r"w:(0|[0-9]+|m:.+)", re.DOTALL)


def item_id(row: Row) -> str:
    seq = row.sequence
    return str(seq) if seq is not None else f"m:{row.id}"


def is_reset_row(row: Row) -> bool:
    return row.metadata.get("contextBoundaryKind") == "reset"


def _mux(row: Row) -> dict[str, Any]:
    mux = row.metadata.get("muxMetadata")
    return mux if isinstance(mux, dict) else {}


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
    mux = _mux(row)
    rollover_id = mux.get("rolloverId")
    if not isinstance(rollover_id, str) or not rollover_id:
        return False
    reason = mux.get("reason")
    if not isinstance(reason, str) or reason not in ROLLOVER_REASONS:  # a list is unhashable
        return False
    previous = mux.get("previousWindowId")
    if not isinstance(previous, str) or not _WINDOW_ID_RE.fullmatch(previous):
        return False
    if not isinstance(mux.get("flushOpportunity"), bool):
        return False
    if "requestedBy" in mux and mux["requestedBy"] != "model":
        return False
    max_tokens = mux.get("maxTokens")
    context_tokens = mux.get("contextTokens")
    return _is_count(max_tokens, positive=True) and _is_count(context_tokens, positive=False)


def is_manual_reset(row: Row) -> bool:
    return is_reset_row(row) and not is_strict_rollover(row)


def is_compaction_boundary(row: Row) -> bool:
    if row.role != "assistant" or not row.flag("compactionBoundary") or is_reset_row(row):
        return False
    compacted = row.metadata.get("compacted")
    if compacted is not True and not (
        isinstance(compacted, str) and compacted in COMPACTED_REASONS
    ):
        return False
    epoch = row.metadata.get("compactionEpoch")
    return isinstance(epoch, int) and not isinstance(epoch, bool) and epoch > 0


def is_ui_hidden(row: Row) -> bool:
    """Xum's rule for rows it hides (R25): ``synthetic`` without ``uiVisible`` exactly
    ``true`` (a missing ``uiVisible`` hides it), or a compaction request."""
    if row.flag("synthetic") and row.metadata.get("uiVisible") is not True:
        return True
    return row.mux_type == COMPACTION_REQUEST_TYPE


def is_synthetic_continuation(row: Row) -> bool:
    """The synthetic ``Continue`` after a mid-stream rollover or a compaction. Rows segue wrote
    before it used Xum's shape (synthetic, typed ``context-window-continuation``) count too;
    the human's tagged message never does (it is not synthetic)."""
    if row.role != "user" or not row.flag("synthetic"):
        return False
    return _mux(row).get(CONTINUATION_FLAG) is True or row.mux_type == CONTINUATION_TYPE


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
