"""R23/R24 on the index: a literal query of several pieces reads as candidates the rows of
its narrowest piece alone when that piece picks out at most ``PROBE_ROWS`` of them
(index_query._narrowest), else the rows holding every piece. Either way the answer is the
scan's, and the rows re-read for it (``scanned.rows``) stay within the hits and those few
extra candidates; a piece found in many rows never makes a call re-read them all."""

from __future__ import annotations

from pathlib import Path

import pytest

from segue._history.store import HistoryStore
from segue._messages import make_row
from segue._retrieval import SessionHistoryTool
from segue._retrieval.index_build import rebuild
from segue._retrieval.index_query import PROBE_ROWS
from segue._workspace import Layout
from tests.retrieval.helpers import entries

QUERY = {"action": "search", "match": "literal", "query": "zebracorn-4471"}
HITS = 3


def _history(layout: Layout, alone: int) -> None:
    """400 rows: :data:`HITS` hold the query, ``alone`` hold ``zebracorn`` without it, the
    rest ``4471`` without ``zebracorn``."""
    texts = [f"row {i}: port 4471 is open, nothing else" for i in range(400)]
    for n, i in enumerate(range(5, 400, 400 // alone)):
        if n < alone:
            texts[i] = f"row {i}: a zebracorn without its number"
    for i in (2, 200, 398):  # off the grid of the others
        texts[i] = f"row {i}: the zebracorn-4471 passphrase"
    HistoryStore(layout, durable=False).append(
        [make_row("user", t, id=f"r{i}") for i, t in enumerate(texts)]
    )


@pytest.mark.parametrize("alone", [PROBE_ROWS - HITS - 1, 10 * PROBE_ROWS])
def test_the_narrowest_piece_reads_few_rows_and_answers_as_the_scan(
    tmp_path: Path, alone: int
) -> None:
    layout = Layout(tmp_path, "ws")
    _history(layout, alone)
    rebuild(layout)
    tool = SessionHistoryTool(layout, build_index=False)
    page = tool.call(QUERY)
    assert tool.index_problem is None
    assert len(page["items"]) == HITS
    scan = SessionHistoryTool(layout, use_index=False, build_index=False)
    assert entries(tool, QUERY) == entries(scan, QUERY)
    read = page["scanned"]["rows"]
    if alone + HITS <= PROBE_ROWS:  # the narrowest piece's rows, each verified
        assert read == alone + HITS
    else:  # every piece's: the hits alone
        assert read == HITS
