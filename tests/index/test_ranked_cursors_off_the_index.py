"""A relevance cursor (the default words search) issued by the index goes on when the next
call cannot use the index — the index lost, a read-only reader after a verified append, a
Xum stream in progress — and is back on the index once it is trusted, cursor and all (R26:
a verified append expires no cursor; SPEC.md §7). Every hit of the query as of its first
page is returned once: none repeated, none lost, nothing appended since, nothing below a
floor that arrives meanwhile."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from segue._context.rollover import manual_reset_row
from segue._history.receipt import read_receipt
from segue._history.store import HistoryStore
from segue._messages import encode_row, make_row
from segue._retrieval import SessionHistoryTool
from segue._retrieval.cursor import MAX_CURSOR
from segue._retrieval.index_build import rebuild
from segue._retrieval.index_file import index_path
from segue._workspace import Layout
from tests.retrieval.helpers import call, stamp_receipt

#: the default search: words, in rank order (R39)
ARGS: dict[str, Any] = {"action": "search", "query": "needle", "limit": 3}
ROWS = 40  # a call's scan bound: the scan takes many pages


def _history(layout: Layout, n: int = 120) -> set[str]:
    """``n`` rows, every third holding the query (more of it in some: the ranks differ from
    position order); the item ids of the hits."""
    rows = [
        make_row("user", f"row {j}: {('needle ' * (1 + j % 5)) if j % 3 == 0 else ''}text {j}",
                 id=f"r{j}")
        for j in range(n)
    ]
    HistoryStore(layout, durable=False).append(rows)
    return {str(j) for j in range(0, n, 3)}


def _page(tool: SessionHistoryTool, cursor: str | None) -> dict[str, Any]:
    page = call(tool, ARGS if cursor is None else {**ARGS, "cursor": cursor})
    assert page["ok"], page
    assert page["nextCursor"] is None or len(page["nextCursor"]) <= MAX_CURSOR
    return page


def _on_index(page: dict[str, Any]) -> bool:
    return bool(page["scanned"]["rows"] <= len(page["items"]))


def _rest(tool: SessionHistoryTool, page: dict[str, Any], got: list[str]) -> list[dict[str, Any]]:
    """Page on to the end, collecting item ids into ``got``; the pages read."""
    seen = []
    while page["nextCursor"] is not None:
        page = _page(tool, page["nextCursor"])
        got += [i["itemId"] for i in page["items"]]
        seen.append(page)
    return seen


def _start(tool: SessionHistoryTool, pages: int) -> tuple[dict[str, Any], list[str]]:
    """The first ``pages`` pages, all from the index, past the first ranked items."""
    page = _page(tool, None)
    got = [i["itemId"] for i in page["items"]]
    assert _on_index(page)
    for _ in range(pages - 1):
        page = _page(tool, page["nextCursor"])
        assert _on_index(page)
        got += [i["itemId"] for i in page["items"]]
    assert page["nextCursor"] is not None
    return page, got


def _each_once(got: list[str], want: set[str]) -> None:
    assert len(got) == len(set(got)), [g for g in got if got.count(g) > 1]
    assert set(got) == want


def test_the_index_lost_between_pages(tmp_path: Path) -> None:
    layout = Layout(tmp_path, "ws")
    want = _history(layout)
    rebuild(layout)
    tool = SessionHistoryTool(layout, max_rows=ROWS, build_index=False)
    page, got = _start(tool, 3)
    assert got != sorted(got, key=int, reverse=True)  # ranked, not newest first
    index_path(layout).unlink()
    pages = _rest(tool, page, got)
    assert pages and tool.index_problem is not None  # the scan answered
    _each_once(got, want)


def test_a_read_only_reader_after_a_verified_append(tmp_path: Path) -> None:
    """The reader segue.api's ModelHistory uses: it never writes the index, which is then
    behind; each page appends one more verified row, holding the query too."""
    layout = Layout(tmp_path, "ws")
    want = _history(layout)
    rebuild(layout)
    tool = SessionHistoryTool(layout, max_rows=ROWS, build_index=False)
    page, got = _start(tool, 2)
    store = HistoryStore(layout, durable=False)
    n = 0
    while page["nextCursor"] is not None:
        store.append([make_row("user", f"needle late {n}", id=f"late{n}")])
        n += 1
        page = _page(tool, page["nextCursor"])  # never stale_cursor
        assert tool.index_problem is not None  # answered by the scan
        got += [i["itemId"] for i in page["items"]]
    assert n > 3
    _each_once(got, want)  # nothing appended after the first page


def test_a_xum_stream_in_progress(tmp_path: Path) -> None:
    layout = Layout(tmp_path, "ws")
    want = _history(layout)
    rebuild(layout)
    tool = SessionHistoryTool(layout, max_rows=ROWS)  # would catch up, but may not write
    page, got = _start(tool, 2)
    HistoryStore(layout, durable=False).append([make_row("user", "needle late", id="late")])
    partial = layout.session_dir / "partial.json"
    partial.write_text("{}")
    future = os.stat(layout.chat).st_mtime_ns + 10**10
    os.utime(partial, ns=(future, future))
    page = _page(tool, page["nextCursor"])
    assert not _on_index(page)
    got += [i["itemId"] for i in page["items"]]
    _rest(tool, page, got)
    _each_once(got, want)


def test_back_on_the_index_cursor_and_all(tmp_path: Path) -> None:
    """Index lost after two ranked pages; two scan pages; the index rebuilt (another process's
    `segue history reindex`): the next call goes on from the index, and so do the others."""
    layout = Layout(tmp_path, "ws")
    want = _history(layout, 600)
    rebuild(layout)
    tool = SessionHistoryTool(layout, max_rows=ROWS, build_index=False)
    page, got = _start(tool, 2)
    index_path(layout).unlink()
    for _ in range(2):
        page = _page(tool, page["nextCursor"])
        assert not _on_index(page)
        got += [i["itemId"] for i in page["items"]]
    rebuild(layout)
    page = _page(tool, page["nextCursor"])
    assert _on_index(page), page["scanned"]
    got += [i["itemId"] for i in page["items"]]
    pages = _rest(tool, page, got)
    assert all(_on_index(p) for p in pages)
    _each_once(got, want)


def test_a_floor_that_arrives_meanwhile_ends_the_look_back(tmp_path: Path) -> None:
    layout = Layout(tmp_path, "ws")
    _history(layout)
    rebuild(layout)
    tool = SessionHistoryTool(layout, max_rows=ROWS, build_index=False)
    page, _ = _start(tool, 2)
    index_path(layout).unlink()
    # segue's store rotates on a reset (which expires cursors); a writer that appends it in
    # place and keeps the epoch makes a verified append, which the next page must check
    receipt = read_receipt(layout)
    assert receipt is not None
    with open(layout.chat, "ab") as f:
        f.write(encode_row(manual_reset_row(row_id="reset", now_ms=1)) + b"\n")
    stamp_receipt(layout, receipt.epoch)
    page = _page(tool, page["nextCursor"])
    assert page["items"] == [] and page["nextCursor"] is None
    assert "reset" in page["note"]


def test_lost_during_the_look_back_back_within_three_calls(tmp_path: Path) -> None:
    """A writable reader rebuilds the index after the calls the scan answers (SPEC.md §6:
    back on the index within 3 calls); the look-back goes on throughout."""
    layout = Layout(tmp_path, "ws")
    want = _history(layout, 600)
    rebuild(layout)
    tool = SessionHistoryTool(layout, max_rows=ROWS)
    page, got = _start(tool, 2)
    index_path(layout).unlink()
    pages = _rest(tool, page, got)
    back = next(n for n, p in enumerate(pages, 1) if _on_index(p) and p["items"])
    assert back <= 3
    assert all(_on_index(p) for p in pages[back:])
    _each_once(got, want)
