"""A look-back that began on the scan (no trusted index) returns to the index as soon as it is
trusted, cursor and all (SPEC.md §7, issue 27 §4): cursor calls also run a rebuild step, and
the query still returns every hit exactly once, in the scan's order (literal) or in rank order
(words)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from segue._messages import encode_row
from segue._retrieval import SessionHistoryTool
from segue._retrieval.index_file import index_path
from segue._workspace import Layout
from tests.retrieval.helpers import call, entries, rollover, text_row, write_history


def _layout(tmp_path: Path) -> Layout:
    layout = Layout(tmp_path, "ws")
    rows = [encode_row(text_row(f"needle {'word ' * (i % 7)}{i}" if i % 5 == 0 else
                                f"filler {i}", i)) for i in range(200)]
    rows.insert(100, encode_row(rollover(1000)))
    write_history(layout, rows[:10], rows[10:])
    return layout


@pytest.mark.parametrize(
    "args",
    [
        {"action": "search", "match": "literal", "query": "needle", "limit": 3},
        {"action": "search", "query": "needle word", "limit": 3},
        {"action": "search", "query": "needle", "order": "newest", "limit": 3},
    ],
    ids=["literal", "relevance", "words-newest"],
)
def test_back_on_the_index_within_three_calls(tmp_path: Path, args: dict[str, Any]) -> None:
    layout = _layout(tmp_path)
    want = entries(SessionHistoryTool(layout, use_index=False), args)
    assert len(want) == 40
    tool = SessionHistoryTool(layout)
    page = call(tool, args)  # no index: the scan answers, then a rebuild step runs
    assert tool.index_problem is not None
    index_path(layout).unlink(missing_ok=True)  # lost again: the next cursor call rebuilds
    got = list(page["items"])
    problems: list[str | None] = []
    extra_rows: list[int] = []  # rows read beyond the items returned (the index reads hits)
    while page["nextCursor"] is not None:
        page = call(tool, {**args, "cursor": page["nextCursor"]})
        assert page["ok"], page
        got += page["items"]
        problems.append(tool.index_problem)
        extra_rows.append(page["scanned"]["rows"] - len(page["items"]))
    assert index_path(layout).exists()  # the cursor call rebuilt it
    # the second call still came from the scan (no index yet: it read rows, or answered
    # with the hits the first call's page ranked and held) ...
    assert problems[0] is not None
    # ... the third on the index, which reads no row it does not return (none at all for
    # hits the scan's first page ranked and held)
    assert all(n <= 0 for n in extra_rows[1:]), extra_rows
    assert all(p is None for p in problems[1:]), problems
    ids = [i["itemId"] for i in got]
    assert sorted(ids, key=int) == sorted((i["itemId"] for i in want), key=int)
    assert len(set(ids)) == len(ids)
    if args.get("match") == "literal" or args.get("order") == "newest":
        assert got == want  # the same answers in the same order
