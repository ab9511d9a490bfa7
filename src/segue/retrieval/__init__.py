"""``session_history``: bounded, private, stale-proof retrieval over the transcript (R23-R27).

* :mod:`~segue.retrieval.schema` — input schema and argument validation (pure)
* :mod:`~segue.retrieval.project` — what a row shows; floors, boundaries, items (pure)
* :mod:`~segue.retrieval.envelope` — the result envelope and its 16 KiB bound (pure)
* :mod:`~segue.retrieval.cursor` — HMAC-authenticated cursors
* :mod:`~segue.retrieval.snapshot` — receipt and stamps; when a cursor is stale
* :mod:`~segue.retrieval.reader` — budgeted, resumable line readers (I/O)
* :mod:`~segue.retrieval.matching` — what a hit is; the scan's exact byte pre-filter (pure)
* :mod:`~segue.retrieval.filters` — the R36 filters over rows (pure)
* :mod:`~segue.retrieval.pages` — one bounded page per action (newest first)
* :mod:`~segue.retrieval.pages_order` — the same pages in the other order (R36)
* :mod:`~segue.retrieval.index_file` — the history index file: schema, trust (R35, §7)
* :mod:`~segue.retrieval.index_build` — building the index and catching it up
* :mod:`~segue.retrieval.index_pages` — the pages answered from the index
* :mod:`~segue.retrieval.index_people` — ``segue history search``/``verify`` over the index
* :mod:`~segue.retrieval.tool` — :class:`SessionHistoryTool`, the entry point
"""

from segue.retrieval.envelope import MAX_RESULT, NOTICE
from segue.retrieval.schema import TOOL_SCHEMA
from segue.retrieval.tool import MAX_SCAN_BYTES, MAX_SCAN_ROWS, SessionHistoryTool

__all__ = [
    "MAX_RESULT",
    "MAX_SCAN_BYTES",
    "MAX_SCAN_ROWS",
    "NOTICE",
    "TOOL_SCHEMA",
    "SessionHistoryTool",
]
