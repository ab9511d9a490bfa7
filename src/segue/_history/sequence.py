"""Seeding ``historySequence`` from disk: the newest row that has one, found from the end.

The store keeps sequences strictly increasing, so the last row with a sequence holds the
maximum; the receipt's ``nextSequence`` floor covers what the files cannot show (rows removed
by a hard clear, or a foreign row with a lower number appended at the end).
"""

from __future__ import annotations

from contextlib import closing

from segue._history.paths import paths
from segue._history.scan import scan_backward
from segue._history.visibility import visible_bounds
from segue._workspace import Layout


def disk_next_sequence(layout: Layout) -> int:
    bounds = visible_bounds(layout)
    with closing(scan_backward(paths(layout).chat, "chat", bounds.chat_end)) as lines:
        for line in lines:
            if line.row is not None and line.row.sequence is not None:
                return line.row.sequence + 1
    with closing(scan_backward(paths(layout).archive, "archive", bounds.archive_end)) as lines:
        for line in lines:
            if line.row is not None and line.row.sequence is not None:
                return line.row.sequence + 1
    return 0
