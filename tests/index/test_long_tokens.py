"""Literal search through tokens longer than the index's vocabulary keeps (SPEC.md §7, R23):
a row holding one (a base64 blob, a paragraph of text without ASCII separators) is found
by any piece of it, at its start, end or inside, answered exactly as the scan answers, and
it is not read for queries that it cannot hold."""

from __future__ import annotations

import random
import string
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from segue._history import HistoryStore
from segue._messages import Row, make_row
from segue._retrieval.backends import pick_backend
from segue._retrieval.index_build import rebuild
from segue._retrieval.tool import SessionHistoryTool
from segue._workspace import Layout
from tests.conftest import scaled

_RNG = random.Random(7)
#: a long token: base64-like, then non-ASCII text with no ASCII separator
BLOB = "".join(_RNG.choice(string.ascii_letters + string.digits) for _ in range(3000))
CJK = "".join(_RNG.choice("日本語の文章検索漢字仮名") for _ in range(900))


def _row(i: int, text: str) -> Row:
    return make_row("user", text, id=f"r{i}")


def _history(tmp: Path) -> Layout:
    layout = Layout(tmp, "long")
    store = HistoryStore(layout, durable=False)
    for i in range(40):
        store.append([_row(i, f"plain row {i} about deploys and {i * 7} logs")])
    store.append([_row(100, f"payload {BLOB} end")])
    store.append([_row(101, f"text {CJK} done")])
    rebuild(layout)
    return layout


def _all(tool: SessionHistoryTool, args: dict[str, Any]) -> tuple[list[str], int]:
    """Every item id a literal search finds, paged to its end, and the calls it took."""
    got: list[str] = []
    answer = tool.call(args)
    calls = 1
    while True:
        assert answer["ok"], answer
        got += [i["itemId"] for i in answer["items"]]
        if not answer.get("nextCursor"):
            return got, calls
        answer = tool.call({**args, "cursor": answer["nextCursor"]})
        calls += 1


@settings(max_examples=scaled(25, 200), deadline=None)
@given(data=st.data())
def test_any_piece_of_a_long_token_is_found_as_the_scan_finds_it(
    tmp_path_factory: Any, data: st.DataObject
) -> None:
    layout = _history(tmp_path_factory.mktemp("h"))
    source = data.draw(st.sampled_from([BLOB, CJK]))
    size = data.draw(st.integers(1, 300))
    start = data.draw(st.integers(0, len(source) - size))
    query = source[start : start + size].swapcase()
    args = {"action": "search", "match": "literal", "query": query}
    index = SessionHistoryTool.over(pick_backend(layout, None))
    scan = SessionHistoryTool.over(pick_backend(layout, None, use_index=False))
    found, _ = _all(index, args)
    want, _ = _all(scan, args)
    assert found == want
    if len(query) >= 3:
        assert want, query  # the differential compared a hit


def test_a_query_no_long_token_holds_does_not_read_them(tmp_path: Path) -> None:
    layout = _history(tmp_path)
    index = SessionHistoryTool.over(pick_backend(layout, None))
    answer = index.call({"action": "search", "match": "literal", "query": "zzqqxx"})
    assert answer["ok"] and answer["items"] == [] and not answer.get("nextCursor")
    assert answer["scanned"]["rows"] == 0  # neither long row was read to say so



def test_a_whole_long_token_between_separators_is_found_as_the_scan_finds_it(
    tmp_path: Path,
) -> None:
    """A query that holds a long token whole, with separators on both sides, names it as an
    exact token, longer than any the vocabulary keeps: the index still finds its row."""
    layout = _history(tmp_path)
    token = BLOB[:600]
    HistoryStore(layout, durable=False).append([_row(102, f"key e {token} a done")])
    index = SessionHistoryTool.over(pick_backend(layout, None))
    scan = SessionHistoryTool.over(pick_backend(layout, None, use_index=False))
    for query in (f"e {token} a", f"{token} a", f"e {token}", f"key e {token} a done"):
        args = {"action": "search", "match": "literal", "query": query}
        want, _ = _all(scan, args)
        assert want, query[:40]  # the differential compared a hit
        assert _all(index, args)[0] == want, query[:40]
        assert index.index_problem is None
