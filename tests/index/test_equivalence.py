"""R35: answers from the index equal the bounded scan's, page for page, and never hold a
byte from before the floor — over random histories (resets, rollovers, damaged reset
candidates, undecodable and oversized lines, reused sequences, archive + chat) and random
queries, filters and orders."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from segue._retrieval import SessionHistoryTool
from segue._retrieval.index_build import rebuild
from segue._workspace import Layout
from tests.index.histories import KINDS, WORDS, Op, ops, private_tags, write
from tests.retrieval.helpers import encoded, pages, rollover, text_row, write_history

QUERIES = [*WORDS, "r1", "tail", "[tool", "K", "ss", "ı", "needle r", "zz", "calls"]
#: a row's tag, whole: not one a snippet cut short ("…r1…" of r10 is not r1)
_TAG = re.compile(r"(?<![\w…])r\d+(?![\w…])")


def _args(draw: Any, action: str) -> dict[str, Any]:
    args: dict[str, Any] = {"action": action}
    if action in ("search", "list_items"):
        if draw(st.booleans()):
            args["role"] = draw(st.sampled_from(["user", "assistant", "system"]))
        if draw(st.booleans()):
            args["tool_name"] = draw(st.sampled_from(["bash", "file_read", "session_history"]))
        if draw(st.booleans()):
            args["max_chars_per_item"] = draw(st.integers(1, 40))
    if action != "read_item":
        if draw(st.booleans()):
            args["order"] = draw(st.sampled_from(["newest", "oldest"]))
        args["limit"] = draw(st.integers(1, 4))
    return args


@st.composite
def calls(draw: Any) -> list[dict[str, Any]]:
    out = [{"action": "list_windows", "limit": draw(st.integers(1, 3))}]
    for action in draw(
        st.lists(
            st.sampled_from(["search", "search", "list_items", "read_item"]), min_size=2, max_size=5
        )
    ):
        args = _args(draw, action)
        if action == "search":
            args["query"] = draw(st.sampled_from(QUERIES))
            args["match"] = "literal"  # R35: the same answers in the same order
        elif action == "list_items":
            args["window_id"] = draw(st.sampled_from(["w:0", "w:1", "w:2", "w:3", "w:5", "w:x"]))
        else:
            args["item_id"] = draw(st.sampled_from(["0", "1", "2", "3", "4", "m:id2", "99"]))
        out.append(args)
    return out


def _strip(page: dict[str, Any]) -> dict[str, Any]:
    """What both must agree on: everything but the bytes read and the cursor's text."""
    out = {k: v for k, v in page.items() if k not in ("scanned", "nextCursor")}
    out["more"] = page.get("nextCursor") is not None
    return out


def _compare(
    indexed: SessionHistoryTool, scan: SessionHistoryTool, args: dict[str, Any], private: set[str]
) -> int:
    """Compare one query's pages; return how many entries (items, windows) they agreed on."""
    got = list(pages(indexed, args))
    assert indexed.index_problem is None, indexed.index_problem
    want = list(pages(scan, args))
    assert [_strip(p) for p in got] == [_strip(p) for p in want], args
    for page in got:
        for entry in page.get("items", []):
            assert entry["windowId"] is not None
            assert not set(_TAG.findall(entry["text"])) & private, (entry, args)
    return sum(len(page.get("items", page.get("windows", []))) for page in got)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(ops, min_size=2, max_size=24), st.integers(0, 24), calls())
def test_index_answers_like_the_scan(
    history: list[Op], split: int, queries: list[dict[str, Any]]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        layout = Layout(Path(tmp), "ws")
        write(layout, history, split)
        rebuild(layout)
        indexed = SessionHistoryTool(layout, build_index=False)
        scan = SessionHistoryTool(layout, use_index=False)
        private = private_tags(history)
        compared = sum(_compare(indexed, scan, args, private) for args in queries)
        # Two empty answers agree about nothing: each history has a window to list.
        assert compared > 0, queries


def test_every_kind_is_generated() -> None:
    assert {"reset", "damaged", "raw-reset", "raw", "reused", "rollover", "compaction"} <= set(
        KINDS
    )


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(ops, min_size=1, max_size=8),
    st.sampled_from(["huge", "huge-reset"]),
    st.integers(0, 8),
    st.sampled_from(QUERIES),
)
def test_oversized_lines_same_results(history: list[Op], kind: str, at: int, query: str) -> None:
    """With a line over 1 MiB the scan needs several calls; the index one. The items found,
    in order, are the same."""
    history = [*history[:at], Op(kind, "needle", "user", "bash"), *history[at:]]
    with tempfile.TemporaryDirectory() as tmp:
        layout = Layout(Path(tmp), "ws")
        write(layout, history, len(history) // 2)
        rebuild(layout)
        indexed = SessionHistoryTool(layout, build_index=False)
        scan = SessionHistoryTool(layout, use_index=False)
        private = private_tags(history)
        compared = 0
        for args in (
            {"action": "search", "query": query},
            {"action": "list_windows"},
            {"action": "search", "query": query, "order": "oldest"},
        ):
            got = [e for p in pages(indexed, args) for e in p.get("items", p.get("windows", []))]
            assert indexed.index_problem is None
            want = [e for p in pages(scan, args) for e in p.get("items", p.get("windows", []))]
            assert got == want
            assert all(not set(_TAG.findall(str(e))) & private for e in got)
            compared += len(got)
        assert compared > 0  # the windows at least: never two empty answers alone


@pytest.mark.parametrize("limit", [1, 3, 10, 25])
@pytest.mark.parametrize("order", ["newest", "oldest"])
def test_window_larger_than_a_page_budget(tmp_path: Path, limit: int, order: str) -> None:
    """Hits wait in the cursor for their window's boundary, and paging then goes on right
    after them: nothing skipped, nothing repeated, never a null window id."""
    layout = Layout(tmp_path, "ws")
    rows = [text_row("needle root", 0), rollover(1)]
    rows += [text_row(f"needle {i}" if i % 3 else f"plain {i}", i) for i in range(2, 300)]
    write_history(layout, [], encoded(rows))
    rebuild(layout)
    args = {"action": "search", "query": "needle", "limit": limit, "order": order}
    scan = SessionHistoryTool(layout, use_index=False, max_rows=40)
    want = [i for p in pages(scan, args) for i in p["items"]]
    got = [i for p in pages(SessionHistoryTool(layout), args) for i in p["items"]]
    assert got == want
    assert len({i["itemId"] for i in got}) == len(got) == 1 + sum(1 for i in range(2, 300) if i % 3)
    assert all(i["windowId"] == ("w:0" if i["itemId"] == "0" else "w:1") for i in got)


def test_read_item_whose_window_is_many_pages_away(tmp_path: Path) -> None:
    """The scan looks for an item's window over as many calls as it takes (never a null
    window id); the index answers at once; both give the same page."""
    layout = Layout(tmp_path, "ws")
    rows = [text_row("root", 0), rollover(1)]
    rows += [text_row(f"row {i} " + "y" * 200, i) for i in range(2, 300)]
    write_history(layout, [], encoded(rows))
    rebuild(layout)
    scan = SessionHistoryTool(layout, use_index=False, max_rows=40)
    for item in ("299", "150", "2"):
        args = {"action": "read_item", "item_id": item, "limit_chars": 50}
        want = [i for p in pages(scan, args) for i in p["items"]]
        got = [i for p in pages(SessionHistoryTool(layout), args) for i in p["items"]]
        assert got == want
        assert {i["windowId"] for i in got} == {"w:1"}
        assert got[0]["text"].startswith(f"row {item} ")
