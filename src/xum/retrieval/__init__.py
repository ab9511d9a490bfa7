"""``session_history``: bounded, private, stale-proof retrieval over the transcript (R23-R27).

* :mod:`~xum.retrieval.schema` — input schema and argument validation (pure)
* :mod:`~xum.retrieval.project` — what a row shows; floors, boundaries, items (pure)
* :mod:`~xum.retrieval.envelope` — the result envelope and its 16 KiB bound (pure)
* :mod:`~xum.retrieval.cursor` — HMAC-authenticated cursors
* :mod:`~xum.retrieval.snapshot` — receipt and stamps; when a cursor is stale
* :mod:`~xum.retrieval.reader` — budgeted, resumable line readers (I/O)
* :mod:`~xum.retrieval.pages` — one bounded page per action
* :mod:`~xum.retrieval.tool` — :class:`SessionHistoryTool`, the entry point
"""

from xum.retrieval.envelope import MAX_RESULT, NOTICE
from xum.retrieval.schema import TOOL_SCHEMA
from xum.retrieval.tool import MAX_SCAN_BYTES, MAX_SCAN_ROWS, SessionHistoryTool

__all__ = [
    "MAX_RESULT",
    "MAX_SCAN_BYTES",
    "MAX_SCAN_ROWS",
    "NOTICE",
    "TOOL_SCHEMA",
    "SessionHistoryTool",
]
