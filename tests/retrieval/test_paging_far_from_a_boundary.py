"""A search far above its window's boundary (issue 26): with any limit 1-25, rows of any size
and any distance to the floor or boundary below, paging to ``nextCursor: null`` returns every
matching item above the floor exactly once, on the bounded scan and the index; and the scan
learns the window once, so it takes about one call per page instead of reading down to the
boundary again for every page."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from segue._messages import encode_row
from segue._retrieval import SessionHistoryTool
from segue._retrieval.index_build import rebuild
from segue._workspace import Layout
from tests.retrieval.helpers import manual_reset, pages, rollover, text_row, write_history


def _history(
    layout: Layout, *, below: int, hits: int, size: int, gap: int, floor: bool
) -> list[str]:
    """The history; the item ids of the hits above the floor or boundary."""
    rows = [encode_row(text_row("TOKD under the floor", 0))]
    rows.append(encode_row(manual_reset(1) if floor else rollover(1)))
    seq = 2
    for _ in range(below):  # rows between the boundary and the first hit
        rows.append(encode_row(text_row("filler " + "f" * size, seq)))
        seq += 1
    ids: list[str] = []
    for i in range(hits):
        rows.append(encode_row(text_row(f"TOKD{i:04d}q " + "z" * size, seq)))
        ids.append(str(seq))
        seq += 1
        for _ in range(gap):
            rows.append(encode_row(text_row("other " + "o" * size, seq)))
            seq += 1
    write_history(layout, rows[: len(rows) // 3], rows[len(rows) // 3 :])
    return ids


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(limit=st.integers(1, 25), size=st.sampled_from([10, 2_000, 33_000, 120_000]),
       below=st.sampled_from([0, 1, 40, 600]), hits=st.integers(1, 60), gap=st.integers(0, 2),
       floor=st.booleans(), match=st.sampled_from(["literal", "words"]),
       chars=st.sampled_from([20, 500, 4000]))
def test_every_hit_comes_exactly_once(limit: int, size: int, below: int, hits: int, gap: int,
                                      floor: bool, match: str, chars: int) -> None:
    if size * (below + hits * (gap + 1)) > 24 << 20:
        return  # keep a run short; the large sizes still meet every distance
    with tempfile.TemporaryDirectory() as tmp:
        layout = Layout(Path(tmp), "ws")
        want = _history(layout, below=below, hits=hits, size=size, gap=gap, floor=floor)
        args = {"action": "search", "query": "TOKD", "limit": limit, "match": match,
                "order": "newest", "max_chars_per_item": chars}
        if not floor:
            want.append("0")  # the root window's row: a rollover is no floor
        for indexed in (False, True):
            if indexed:
                rebuild(layout)
            tool = SessionHistoryTool(layout, use_index=indexed)
            answers = list(pages(tool, args))
            got = [str(i["itemId"]) for p in answers for i in p["items"]]
            assert sorted(got, key=int) == sorted(want, key=int), (indexed, len(got), len(want))
            assert all(i["windowId"] for p in answers for i in p["items"])
            if not indexed:
                # one call per page, give or take the first page's wait for its window
                # and an empty last one: not two per page
                full_pages = -(-hits // limit)
                size_of = sum(f.stat().st_size for f in (layout.archive, layout.chat))
                rows = 2 + below + hits * (gap + 1)
                budgets = size_of // (2 << 20) + rows // 500  # calls reading it all once takes
                per_page = min(limit, 16384 // (chars + 120))  # what 16 KiB holds
                full_pages = -(-len(want) // per_page)
                # (rows between a held hit and its boundary are read again once)
                assert len(answers) <= full_pages + 2 + 2 * budgets, len(answers)


def test_the_tokd_reproduction(tmp_path: Path) -> None:
    """Issue 26's case: a manual reset, then 75 rows of ~32 KiB holding TOKD0000q…TOKD0074q,
    no index, ``limit: 25``: all 75 come (before: 36 in 3 calls, the oldest 39 never)."""
    layout = Layout(tmp_path, "ws")
    rows = [encode_row(manual_reset(0))]
    rows += [encode_row(text_row(f"TOKD{i:04d}q " + "z" * 32_000, i + 1)) for i in range(75)]
    write_history(layout, [], rows)
    tool = SessionHistoryTool(layout, use_index=False)
    answers = list(pages(tool, {"action": "search", "match": "literal", "query": "TOKD",
                                "limit": 25}))
    got = [str(i["itemId"]) for p in answers for i in p["items"]]
    assert sorted(got, key=int) == [str(i) for i in range(1, 76)]
