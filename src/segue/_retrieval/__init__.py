"""``session_history``: bounded, private, stale-proof retrieval over the transcript (R23-R27).

* :mod:`~segue._retrieval.schema` — input schema and argument validation (pure)
* :mod:`~segue._retrieval.project` — what a row shows; floors, boundaries, items (pure)
* :mod:`~segue._retrieval.envelope` — the result envelope and its 16 KiB bound (pure)
* :mod:`~segue._retrieval.cursor` — HMAC-authenticated cursors
* :mod:`~segue._retrieval.snapshot` — receipt and stamps; when a cursor is stale
* :mod:`~segue._retrieval.reader` — budgeted, resumable line readers (I/O)
* :mod:`~segue._retrieval.matching` — what a hit is; the scan's exact byte pre-filter (pure)
* :mod:`~segue._retrieval.filters` — the R36 filters over rows (pure)
* :mod:`~segue._retrieval.pages` — one bounded page per action (newest first)
* :mod:`~segue._retrieval.pages_order` — the same pages in the other order (R36)
* :mod:`~segue._retrieval.index_file` — the history index file: schema, trust (R35, §7)
* :mod:`~segue._retrieval.index_build` — building the index and catching it up
* :mod:`~segue._retrieval.index_pages` — the pages answered from the index
* :mod:`~segue._retrieval.index_people` — ``segue history search``/``verify`` over the index
* :mod:`~segue._retrieval.tool` — :class:`SessionHistoryTool`, the entry point
"""

from typing import TYPE_CHECKING

from segue._lazy import listing, load

if TYPE_CHECKING:  # what type checkers see; at run time each name loads on first use
    from segue._retrieval.envelope import MAX_RESULT, NOTICE
    from segue._retrieval.schema import TOOL_SCHEMA
    from segue._retrieval.tool import MAX_SCAN_BYTES, MAX_SCAN_ROWS, SessionHistoryTool

#: Public name → its module (``segue history search`` uses the index modules without the tool).
_LAZY: dict[str, str] = {
    "MAX_RESULT": "segue._retrieval.envelope",
    "NOTICE": "segue._retrieval.envelope",
    "TOOL_SCHEMA": "segue._retrieval.schema",
    "MAX_SCAN_BYTES": "segue._retrieval.tool",
    "MAX_SCAN_ROWS": "segue._retrieval.tool",
    "SessionHistoryTool": "segue._retrieval.tool",
}

__all__ = [
    "MAX_RESULT",
    "MAX_SCAN_BYTES",
    "MAX_SCAN_ROWS",
    "NOTICE",
    "TOOL_SCHEMA",
    "SessionHistoryTool",
]


def __getattr__(name: str) -> object:
    return load(__name__, _LAZY, name)


def __dir__() -> list[str]:
    return listing(globals(), _LAZY)
