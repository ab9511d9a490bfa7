"""Queries the trigram index cannot look up (under 3 characters, or no 3 ASCII characters in a
row) keep R24's bounds on the index too: each call examines at most 500 rows and 2 MiB, says
what it read in ``scanned`` (true figures, not 0), and paging returns exactly the scan's
answers (issue 27 §4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from segue._messages import encode_row
from segue._retrieval import SessionHistoryTool
from segue._retrieval.index_build import rebuild
from segue._workspace import Layout
from tests.retrieval.helpers import entries, pages, text_row, write_history


@pytest.mark.parametrize("query", ["qz", "é!"])
def test_short_queries_page_within_the_bounds(tmp_path: Path, query: str) -> None:
    layout = Layout(tmp_path, "ws")
    rows = [encode_row(text_row(f"row {i} " + ("qz é! " if i % 97 == 0 else "plain ") * 40, i))
            for i in range(1500)]
    write_history(layout, rows[:700], rows[700:])
    rebuild(layout)
    args = {"action": "search", "match": "literal", "query": query, "limit": 25}
    tool = SessionHistoryTool(layout)
    answers = list(pages(tool, args))
    assert tool.index_problem is None
    assert len(answers) >= 3  # 1,500 rows take several calls of at most 500
    assert all(0 < p["scanned"]["rows"] <= 500 for p in answers[:-1])
    assert all(p["scanned"]["bytes"] > 0 for p in answers)
    got = [i for p in answers for i in p["items"]]
    want = entries(SessionHistoryTool(layout, use_index=False), args)
    assert got == want and len(got) == 16
