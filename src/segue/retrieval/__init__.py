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

from typing import TYPE_CHECKING

from segue._lazy import listing, load

if TYPE_CHECKING:  # what type checkers see; at run time each name loads on first use
    from segue.retrieval.envelope import MAX_RESULT, NOTICE
    from segue.retrieval.schema import TOOL_SCHEMA
    from segue.retrieval.tool import MAX_SCAN_BYTES, MAX_SCAN_ROWS, SessionHistoryTool

#: Public name → its module (``segue history search`` uses the index modules without the tool).
_LAZY: dict[str, str] = {
    "MAX_RESULT": "segue.retrieval.envelope",
    "NOTICE": "segue.retrieval.envelope",
    "TOOL_SCHEMA": "segue.retrieval.schema",
    "MAX_SCAN_BYTES": "segue.retrieval.tool",
    "MAX_SCAN_ROWS": "segue.retrieval.tool",
    "SessionHistoryTool": "segue.retrieval.tool",
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
