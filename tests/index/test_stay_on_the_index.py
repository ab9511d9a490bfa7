"""Staying on the index (SPEC.md §6, §7; issue 27 §4): a look-back that began on the bounded
scan — the index lost, or just untrusted by a failed send's quarantine — is back on the index
within 3 calls, cursor and all, for every action that pages (``search``, ``list_items`` and
``read_item``), and its answers are the scan's.

A call answered from the index reads only the rows it returns (R35: ``scanned`` reports what
the call really read), or none (hits the scan held until their window was known, which the
index knows); the scan reads every row on its way. That is the observable: a call is "on the
index" when ``scanned.rows`` is at most the items it returned (``read_item``: 1)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from segue._context.boundaries import item_id
from segue._history.store import HistoryStore
from segue._messages import make_row
from segue._retrieval import SessionHistoryTool
from segue._retrieval.index_build import rebuild
from segue._retrieval.index_file import index_path
from segue._workspace import Layout
from tests.retrieval.helpers import call, entries, rollover

#: a call's scan bound, small so that these histories take many scan pages
ROWS = 40
MAX_CALLS = 3  # SPEC.md §6: back on the index within 3 calls


def _history(layout: Layout) -> None:
    """600 rows in three windows, the middle one long (so list_items pages through it)."""
    store = HistoryStore(layout, durable=False)
    for start in range(0, 600, 50):
        batch = [
            make_row("user" if j % 3 else "assistant",
                     f"row {j}: {'needle ' if j % 4 == 0 else ''}pytest log line {j * 7}",
                     id=f"r{j}")
            for j in range(start, start + 50)
        ]
        if start in (100, 500):
            batch.insert(0, rollover(start, rid=f"b{start}"))
        store.append(batch)


def _tools(layout: Layout) -> tuple[SessionHistoryTool, SessionHistoryTool]:
    return (SessionHistoryTool(layout, max_rows=ROWS),
            SessionHistoryTool(layout, max_rows=ROWS, use_index=False))


def _on_index(page: dict[str, Any], action: str, tool: SessionHistoryTool) -> bool:
    """The call was answered from the index: the tool says so, and it read no more rows than
    it returned (a scan page answered from the hits its last page ranked and held reads none
    at all, so the rows alone do not tell)."""
    if tool.index_problem is not None:
        return False
    returned = len(page["items"])
    if action == "read_item":
        return bool(returned == 1 and page["scanned"]["rows"] == 1)
    return bool(page["scanned"]["rows"] <= returned)


def _look_back(
    tool: SessionHistoryTool, args: dict[str, Any], *, stays: bool = True
) -> tuple[list[Any], int, int]:
    """Every item of a paged look-back, the calls it took, and the first call answered from
    the index (1-based); with ``stays``, every call after that one must be on the index."""
    page = call(tool, args)
    got, calls, first = list(page["items"]), 1, 0
    if _on_index(page, args["action"], tool):
        first = 1
    while page["nextCursor"] is not None:
        page = call(tool, {**args, "cursor": page["nextCursor"]})
        assert page["ok"], page
        got += page["items"]
        calls += 1
        if first and stays:
            assert _on_index(page, args["action"], tool), (calls, page["scanned"])
        elif _on_index(page, args["action"], tool):
            first = calls
    return got, calls, first


def _windows(tool: SessionHistoryTool) -> list[str]:
    return [w["windowId"] for w in entries(tool, {"action": "list_windows"})]


def _cases(scan: SessionHistoryTool) -> list[dict[str, Any]]:
    middle = _windows(scan)[1]
    return [
        {"action": "search", "match": "literal", "query": "needle", "limit": 5},
        {"action": "search", "match": "literal", "query": "needle", "order": "oldest",
         "limit": 5},
        {"action": "list_items", "window_id": middle, "order": "oldest", "limit": 5},
        {"action": "list_items", "window_id": middle, "limit": 5},  # newest first
        {"action": "read_item", "item_id": "3", "limit_chars": 8},
        # found by the first call; its window's boundary is 50 rows further down
        {"action": "read_item", "item_id": "590", "limit_chars": 8},
        # the default search: words, in rank order (R39)
        {"action": "search", "query": "needle", "limit": 5},
        {"action": "search", "query": "needle log", "role": "user", "limit": 5},
    ]


def _same(args: dict[str, Any], got: list[Any], want: list[Any]) -> None:
    """The look-back's items are the scan's; a relevance search's in any order (the scan
    ranks within each page it reads, the index over the whole query), each once."""
    if args["action"] == "search" and args.get("match") != "literal":
        ids = [i["itemId"] for i in got]
        assert len(ids) == len(set(ids))
        assert sorted(ids) == sorted(i["itemId"] for i in want)
    else:
        assert got == want


def _lose(layout: Layout) -> None:
    index_path(layout).unlink()


def _fail_a_send(layout: Layout) -> None:
    store = HistoryStore(layout, durable=False)
    sent = store.append([make_row("user", "a message the model never answered", id="lost")])
    store.quarantine(item_id(sent[0]), send_failure="upstream 503")


CASES = ["search", "search-oldest", "items-oldest", "items-newest", "read", "read-window",
         "words", "words-filtered"]
#: calls before the index appears for the scan to be past locating: paging forward through
#: the window (oldest), reading it backward (newest: after a pass to find its end), or
#: looking for the item's window
PAGING = {0: 14, 1: 18, 2: 14, 3: 24, 4: 15, 6: 14, 7: 6}


@pytest.mark.parametrize("case", range(len(CASES)), ids=CASES)
@pytest.mark.parametrize("event", [_lose, _fail_a_send], ids=["lost-index", "failed-send"])
def test_back_on_the_index_within_three_calls(tmp_path: Path, event: Any, case: int) -> None:
    layout = Layout(tmp_path, "ws")
    _history(layout)
    rebuild(layout)
    tool, scan = _tools(layout)
    args = _cases(scan)[case]
    event(layout)
    want, scan_calls, _ = _look_back(scan, args, stays=False)
    assert want and scan_calls > MAX_CALLS  # the scan alone pages for long
    got, _, first = _look_back(tool, args)
    assert 1 <= first <= MAX_CALLS
    _same(args, got, want)


@pytest.mark.parametrize(
    ("case", "before"),
    [*((c, 1) for c in range(len(CASES))), *PAGING.items()],
    ids=[*(f"{c}-locating" for c in CASES), *(f"{CASES[c]}-paging" for c in PAGING)],
)
def test_a_scan_cursor_goes_on_from_the_index(tmp_path: Path, case: int, before: int) -> None:
    """The look-back starts with no index at all; the index is put in place by another
    process (``segue history reindex``) while it pages — while the scan still locates the
    window or item, or later (``PAGING``): the next call continues from the index."""
    layout = Layout(tmp_path, "ws")
    _history(layout)
    tool = SessionHistoryTool(layout, max_rows=ROWS, build_index=False)
    _, scan = _tools(layout)
    args = _cases(scan)[case]
    want = entries(scan, args)
    page = call(tool, args)
    got = list(page["items"])
    for _ in range(before - 1):
        page = call(tool, {**args, "cursor": page["nextCursor"]})
        got += page["items"]
    assert not _on_index(page, args["action"], tool)
    assert page["nextCursor"] is not None
    rebuild(layout)
    page = call(tool, {**args, "cursor": page["nextCursor"]})
    assert _on_index(page, args["action"], tool), page["scanned"]
    got += page["items"]
    while page["nextCursor"] is not None:
        page = call(tool, {**args, "cursor": page["nextCursor"]})
        assert _on_index(page, args["action"], tool), page["scanned"]
        got += page["items"]
    _same(args, got, want)


class _LateClock:
    """A clock that is always past every deadline."""

    @staticmethod
    def monotonic() -> float:
        return float("inf")


def test_a_catch_up_is_bounded_per_call_and_goes_on_at_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call catches up appended bytes only until its deadline (here: always past, so one
    batch of rows a call); it answers from the scan meanwhile, and the following calls go
    on where it stopped until the index answers, as the scan would."""
    from segue._retrieval import index_build
    from segue._retrieval.index_file import open_index, read_meta

    layout = Layout(tmp_path, "ws")
    _history(layout)
    rebuild(layout)
    store = HistoryStore(layout, durable=False)
    store.append([make_row("user", f"needle appended {j}", id=f"x{j}") for j in range(95)])
    monkeypatch.setattr(index_build, "time", _LateClock)
    monkeypatch.setattr(index_build, "_TIMED_BATCH", 10)
    tool, scan = _tools(layout)
    args = {"action": "search", "match": "literal", "query": "needle appended", "limit": 5}

    def read() -> int:
        conn = open_index(layout, write=False)
        try:
            return read_meta(conn).chat_read
        finally:
            conn.close()

    before, progress = read(), []
    for _ in range(20):
        page = call(tool, args)
        progress.append(read())
        if _on_index(page, "search", tool) and tool.index_problem is None:
            break
        assert "caught up" in (tool.index_problem or "")
    assert len(progress) == 10  # 95 rows, 10 a call: nine calls behind, the tenth on it
    assert [before, *progress] == sorted({before, *progress})  # on, every call
    assert progress[-1] == layout.chat.stat().st_size
    assert entries(tool, args) == entries(scan, args) != []
