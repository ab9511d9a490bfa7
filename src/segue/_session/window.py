"""Loading the active window from the store, newest first, stopping at its boundary.

``chat.jsonl`` starts at the newest durable boundary, so this reverse scan reads only the
active epoch however long the history is. A line that cannot be parsed but may be a reset row
(or is too large to parse) stops the scan as well: damage fails closed (R11), so nothing
written before a possible floor ever reaches a request.
"""

from __future__ import annotations

from segue._context.boundaries import is_boundary
from segue._context.floor import is_floor_line
from segue._history.protocol import TranscriptStore
from segue._messages import Row


def load_window(store: TranscriptStore) -> list[Row]:
    """The rows of the newest window, oldest first, with its boundary row (if any) first."""
    newest_first: list[Row] = []
    for line in store.entries_reverse():
        row = line.row
        if is_floor_line(row, line.reset_marker):
            if row is not None and is_boundary(row):
                newest_first.append(row)
            break
        if row is None:
            continue
        newest_first.append(row)
        if is_boundary(row):
            break
    newest_first.reverse()
    return newest_first
