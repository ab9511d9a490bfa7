"""The active conversation context: which rows the provider may see (SPEC.md §1, §3, R5, R22).

Pure. The active window starts after the newest reset boundary, or at the newest compaction
boundary. Within it, reset rows and empty assistant rows (quarantined input, R22, and
boundaries) never reach the provider. Tool calls and their results live in the same row
(``dynamic-tool`` parts carry input and output), and rollover happens only at settled steps,
so a pair can never be split across windows.

A call without a result (a stream interrupted mid tool call leaves ``input-available``,
``input-streaming`` or ``output-redacted``) stays on disk but is left out of the request: a
provider rejects a call that has no result. A row left with no parts by that is left out too.
A call whose result a later row of the window carries (same ``toolCallId``: writers that keep
call and result in two rows, like the framework integrations) has its result and stays.

The human's message that triggered a rollover (tagged ``context-window-continuation``) is an
ordinary user row here: it always reaches the provider.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from segue._context.boundaries import (
    LEAD_IN_TYPE,
    WARNING_TYPE,
    is_boundary,
    is_compaction_boundary,
    is_reset_row,
    is_synthetic_continuation,
)
from segue._messages import Part, Row

#: tool-call states that carry a result; any other call is interrupted (SPEC.md §3)
SETTLED_TOOL_STATES: frozenset[str] = frozenset({"output-available", "output-error"})

#: Synthetic rows segue writes for the model's benefit; they alone do not make a window
#: worth sealing (R13: "an empty or internal-only window needs no history access").
INTERNAL_TYPES: frozenset[str] = frozenset({LEAD_IN_TYPE, WARNING_TYPE})


def newest_window_start(rows: Sequence[Row]) -> int:
    """Index of the first row of the newest window (a compaction row is its own first row)."""
    for index in range(len(rows) - 1, -1, -1):
        row = rows[index]
        if is_boundary(row):
            return index if is_compaction_boundary(row) else index + 1
    return 0


def is_tool_call(part: Part) -> bool:
    return part.type == "dynamic-tool" or part.type.startswith("tool-")


def is_unsettled_call(part: Part, answered: frozenset[str] = frozenset()) -> bool:
    """A call without its result. ``answered``: call ids whose result a later row carries
    (writers that keep call and result in two rows, as the framework integrations do)."""
    if not is_tool_call(part) or part.state in SETTLED_TOOL_STATES:
        return False
    return part.toolCallId is None or part.toolCallId not in answered


def answered_call_ids(rows: Sequence[Row]) -> frozenset[str]:
    """The ids of every call that has a result somewhere in ``rows``."""
    return frozenset(
        p.toolCallId
        for row in rows
        for p in row.parts
        if is_tool_call(p) and p.state in SETTLED_TOOL_STATES and p.toolCallId is not None
    )


def without_unsettled_calls(row: Row, answered: frozenset[str] = frozenset()) -> Row:
    """``row`` without its tool calls that have no result (the same object when it has none)."""
    if not any(is_unsettled_call(p, answered) for p in row.parts):
        return row
    kept = tuple(p for p in row.parts if not is_unsettled_call(p, answered))
    return msgspec.structs.replace(row, parts=kept)


def provider_eligible(row: Row) -> bool:
    if is_reset_row(row) or row.flag("contextBudgetRejected"):
        return False
    return not (row.role == "assistant" and not row.parts)


def active_rows(rows: Sequence[Row], *, drop_unanswered: bool = True) -> list[Row]:
    """The rows of the newest window that a request may include, oldest first.

    ``drop_unanswered=False`` keeps calls without a result: for a framework's own session
    store, which hands back exactly what it stored and pairs calls itself.

    A synthetic continuation that a user message follows was never acted on (its turn was
    interrupted, e.g. by a crash right after a mid-stream rollover): it is left out, so a
    restarted process never resurrects queued work (R7) — the user's new message leads.
    """
    eligible: list[Row] = []
    window = rows[newest_window_start(rows) :]
    answered = answered_call_ids(window)
    for row in window:
        if not provider_eligible(row):
            continue
        cleaned = without_unsettled_calls(row, answered) if drop_unanswered else row
        if cleaned.parts or not row.parts:
            eligible.append(cleaned)
    return [
        row
        for index, row in enumerate(eligible)
        if not (
            is_synthetic_continuation(row)
            and index + 1 < len(eligible)
            and eligible[index + 1].role == "user"
        )
    ]


def is_internal(row: Row) -> bool:
    return row.mux_type in INTERNAL_TYPES or is_synthetic_continuation(row)


def has_sealable_context(rows: Sequence[Row]) -> bool:
    """Whether the active window holds anything a rollover would seal away."""
    return any(not is_internal(r) for r in active_rows(rows))
