"""segue.history: the crash-safe transcript store (SPEC.md §3, R8, R11, R22, R27-R30, R34).

Public surface: :class:`HistoryStore` (JSONL on disk) and :class:`InMemoryStore`, both
:class:`MaintainedStore`s (the core :class:`TranscriptStore` and maintenance); the bounded
scanners; receipts; the reader-visibility rule.
"""

from typing import TYPE_CHECKING

from segue._lazy import listing, load

if TYPE_CHECKING:  # what type checkers see; at run time each name loads on first use
    from segue.history.memory import InMemoryStore
    from segue.history.protocol import (
        Entry,
        MaintainedStore,
        ReadsSnapshots,
        RemovesNewest,
        TranscriptStore,
    )
    from segue.history.receipt import (
        FileStamp,
        Receipt,
        current_stamps,
        read_receipt,
        receipt_matches,
    )
    from segue.history.reports import RecoveryReport, VerifyReport
    from segue.history.scan import StoredLine, scan_backward, scan_forward
    from segue.history.store import HistoryStore
    from segue.history.visibility import Bounds, visible_bounds

#: Public name → its module (``import segue.history.scan`` then needs neither the store nor
#: the in-memory store).
_LAZY: dict[str, str] = {
    "InMemoryStore": "segue.history.memory",
    "Entry": "segue.history.protocol",
    "MaintainedStore": "segue.history.protocol",
    "ReadsSnapshots": "segue.history.protocol",
    "RemovesNewest": "segue.history.protocol",
    "TranscriptStore": "segue.history.protocol",
    "FileStamp": "segue.history.receipt",
    "Receipt": "segue.history.receipt",
    "current_stamps": "segue.history.receipt",
    "read_receipt": "segue.history.receipt",
    "receipt_matches": "segue.history.receipt",
    "RecoveryReport": "segue.history.reports",
    "VerifyReport": "segue.history.reports",
    "StoredLine": "segue.history.scan",
    "scan_backward": "segue.history.scan",
    "scan_forward": "segue.history.scan",
    "HistoryStore": "segue.history.store",
    "Bounds": "segue.history.visibility",
    "visible_bounds": "segue.history.visibility",
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
