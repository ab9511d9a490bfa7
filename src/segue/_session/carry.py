"""What a fresh window carries of the turn a rollover interrupts (R5, R6, R21). Pure.

A rollover in the middle of a turn must not leave the model with only the lead-in and
"Continue": it would not know what it was doing, and a look-back it had just made would be
lost to the very rollover it caused (its result pushed the window over), so it would search
again. Two things travel into the new window:

* **the request that owns the turn**: the newest human request of the window (or, in a
  window that itself began mid-turn, the one its boundary carried), quoted into the lead-in
  the way Xum's mid-turn lead-in quotes it (a window that began mid-turn passes on the
  quote its own lead-in holds);
* **the triggering step's calls with their results**: copies of the step's rows, written
  after the continuation in the rollover batch. A copy is ``synthetic``, hidden in the view
  and in look-back (the original stays in the earlier window, where ``session_history``
  finds it once), and marked ``rlmPreservedTailCopy``, Xum's mark for rows copied past a
  boundary. Each copy has its own id; nothing is rewritten.

Both only ever enter within admission (R21): the rollover tries the richest batch first and
drops the copies, then the quote, when the fresh window would not fit them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from segue._context.active import is_internal, is_tool_call
from segue._context.boundaries import (
    COMPACTION_REQUEST_TYPE,
    LEAD_IN_TYPE,
    ROOT_WINDOW_ID,
    is_boundary,
    item_id,
    window_id_of_boundary,
)
from segue._messages import Row

#: Xum's mark for a row copied past a context boundary (its original is in an earlier window).
TAIL_COPY_KEY = "rlmPreservedTailCopy"
#: The quoted request is cut here; the full row stays reachable with session_history.
REQUEST_MAX_CHARS = 8_000

#: metadata a copy does not take over: the store's identity, and what described the
#: original's own step (its usage, an interruption)
_NOT_COPIED = frozenset({"historySequence", "usage", "partial", "contextUsage", "finishReason"})


def is_tail_copy(row: Row) -> bool:
    return row.flag(TAIL_COPY_KEY)


def is_request_row(row: Row) -> bool:
    """A human request: a user row that is neither segue's own (lead-in, warning,
    continuation) nor synthetic, quarantined, a compaction request or a copy."""
    return (
        row.role == "user"
        and not row.flag("synthetic")
        and not row.flag("contextBudgetRejected")
        and not is_internal(row)
        and row.mux_type != COMPACTION_REQUEST_TYPE
        and not is_tail_copy(row)
        and bool(row.text)
    )


def owning_request(window: Sequence[Row]) -> dict[str, Any] | None:
    """The request that owns the turn running in ``window`` (a window as loaded: its boundary
    first, if any), in Xum's shape ``{text, truncated, windowId?, itemId?}``; None when
    neither the window nor its lead-in holds one."""
    boundary = window[0] if window and is_boundary(window[0]) else None
    window_id = window_id_of_boundary(boundary) if boundary is not None else ROOT_WINDOW_ID
    for row in reversed(window):
        if is_request_row(row):
            text = row.text
            quote: dict[str, Any] = {
                "text": text[:REQUEST_MAX_CHARS],
                "truncated": len(text) > REQUEST_MAX_CHARS,
                "windowId": window_id,
            }
            if row.sequence is not None:
                quote["itemId"] = item_id(row)
            return quote
    for row in window:
        if row.mux_type == LEAD_IN_TYPE:
            return _quoted(row.text)
    return None


def _quoted(lead_in: str) -> dict[str, Any] | None:
    """The request a lead-in quotes (this module's and Xum's ``<request>`` block)."""
    found = _QUOTE_RE.search(lead_in)
    if found is None:
        return None
    quote: dict[str, Any] = {"text": found["text"], "truncated": found["cut"] is not None}
    if found["item"] is not None:
        quote.update(itemId=found["item"], windowId=found["window"])
    return quote


_QUOTE_RE = re.compile(
    r"The request that owns this turn(?: \(item (?P<item>\d+) in (?P<window>w:\d+)\))?"
    r"(?P<cut>, cut to fit[^:\n]*)?:\n<request>\n(?P<text>.*)\n</request>",
    re.DOTALL,
)


def carries_results(row: Row) -> bool:
    return any(is_tool_call(p) for p in row.parts)


def tail_copies(step: Sequence[Row], new_id: Callable[[str], str]) -> list[Row]:
    """Copies of the step's rows that hold tool calls or their results, for the new window:
    hidden (synthetic, not UI-visible), marked as copies, each with a new id."""
    copies: list[Row] = []
    for row in step:
        if not carries_results(row) or is_tail_copy(row):
            continue
        meta = {k: v for k, v in row.metadata.items() if k not in _NOT_COPIED}
        meta.update({"synthetic": True, "uiVisible": False, TAIL_COPY_KEY: True})
        copies.append(
            Row(
                id=new_id("carry"),
                role=row.role,
                parts=row.parts,
                metadata=meta,
                workspaceId=row.workspaceId,
                extra=row.extra,
            )
        )
    return copies
