"""segue.history: the crash-safe transcript store (SPEC.md §3, R8, R11, R22, R27-R30, R34).

Public surface: :class:`HistoryStore` (JSONL on disk) and :class:`InMemoryStore`, both
:class:`TranscriptStore`; the bounded scanners; receipts; the reader-visibility rule.
"""

from segue.history.memory import InMemoryStore
from segue.history.protocol import TranscriptStore
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

__all__ = [
    "Bounds",
    "FileStamp",
    "HistoryStore",
    "InMemoryStore",
    "Receipt",
    "RecoveryReport",
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
