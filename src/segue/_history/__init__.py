"""segue._history: the crash-safe transcript store (SPEC.md §3, R8, R11, R22, R27-R30, R34).

Public surface: :class:`HistoryStore` (JSONL on disk) and :class:`InMemoryStore`, both
:class:`MaintainedStore`s (the core :class:`TranscriptStore` and maintenance); the bounded
scanners; receipts; the reader-visibility rule.
"""

from typing import TYPE_CHECKING

from segue._lazy import listing, load

if TYPE_CHECKING:  # what type checkers see; at run time each name loads on first use
    from segue._history.memory import InMemoryStore
    from segue._history.protocol import (
        Entry,
        MaintainedStore,
        ReadsSnapshots,
        RemovesNewest,
        TranscriptStore,
    )
    from segue._history.receipt import (
        FileStamp,
        Receipt,
        current_stamps,
        read_receipt,
        receipt_matches,
    )
    from segue._history.reports import RecoveryReport, VerifyReport
    from segue._history.scan import StoredLine, scan_backward, scan_forward
    from segue._history.store import HistoryStore
    from segue._history.visibility import Bounds, visible_bounds

#: Public name → its module (``import segue._history.scan`` then needs neither the store nor
#: the in-memory store).
_LAZY: dict[str, str] = {
    "InMemoryStore": "segue._history.memory",
    "Entry": "segue._history.protocol",
    "MaintainedStore": "segue._history.protocol",
    "ReadsSnapshots": "segue._history.protocol",
    "RemovesNewest": "segue._history.protocol",
    "TranscriptStore": "segue._history.protocol",
    "FileStamp": "segue._history.receipt",
    "Receipt": "segue._history.receipt",
    "current_stamps": "segue._history.receipt",
    "read_receipt": "segue._history.receipt",
    "receipt_matches": "segue._history.receipt",
    "RecoveryReport": "segue._history.reports",
    "VerifyReport": "segue._history.reports",
    "StoredLine": "segue._history.scan",
    "scan_backward": "segue._history.scan",
    "scan_forward": "segue._history.scan",
    "HistoryStore": "segue._history.store",
    "Bounds": "segue._history.visibility",
    "visible_bounds": "segue._history.visibility",
}

__all__ = [
    "Bounds",
    "Entry",
    "FileStamp",
    "HistoryStore",
    "InMemoryStore",
    "MaintainedStore",
    "ReadsSnapshots",
    "Receipt",
    "RecoveryReport",
    "RemovesNewest",
    "StoredLine",
    "TranscriptStore",
    "VerifyReport",
    "current_stamps",
    "read_receipt",
    "receipt_matches",
    "scan_backward",
    "scan_forward",
    "visible_bounds",
]


def __getattr__(name: str) -> object:
    return load(__name__, _LAZY, name)


def __dir__() -> list[str]:
    return listing(globals(), _LAZY)
