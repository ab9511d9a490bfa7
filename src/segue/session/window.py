"""Loading the active window from the store, newest first, stopping at its boundary.

``chat.jsonl`` starts at the newest durable boundary, so this reverse scan reads only the
active epoch however long the history is. A line that cannot be parsed but may be a reset row
(or is too large to parse) stops the scan as well: damage fails closed (R11), so nothing
written before a possible floor ever reaches a request.
"""

from __future__ import annotations

from segue.context.boundaries import is_boundary, is_compaction_boundary, raw_may_be_reset
from segue.history.protocol import TranscriptStore
from segue.messages import Row


def load_window(store: TranscriptStore) -> list[Row]:
    """The rows of the newest window, oldest first, with its boundary row (if any) first."""
    newest_first: list[Row] = []
    for line in store.lines_reverse():
        row = line.row
        if row is None:
            if line.reset_marker or (line.raw is not None and raw_may_be_reset(line.raw)):
                break
            continue
        newest_first.append(row)
        if is_boundary(row) or is_compaction_boundary(row):
            break
    newest_first.reverse()
    return newest_first
