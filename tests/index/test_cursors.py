"""A cursor issued by an index page survives verified appends (R26) whichever path answers
the next page: the index again, or the bounded scan because the index is behind, locked,
missing or not to be used. The pages that follow give what the scan alone would have given
on the same history with the same append, and never anything below the privacy floor."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from segue._history.store import HistoryStore
from segue._retrieval import SessionHistoryTool
from segue._retrieval.backends.sqlite_index import IndexBackend
from segue._retrieval.index_build import rebuild
from segue._retrieval.index_file import index_path
from segue._workspace import Layout
from tests.retrieval.helpers import call, encoded, manual_reset, rollover, text_row, write_history

CALLS: list[dict[str, Any]] = [
    {"action": "search", "match": "literal", "query": "needle", "limit": 2},
    {"action": "search", "match": "literal", "query": "needle", "limit": 2, "order": "oldest"},
    {"action": "list_windows", "limit": 1},
    {"action": "list_windows", "limit": 1, "order": "oldest"},
    {"action": "list_items", "window_id": "w:9", "limit": 2},
    {"action": "list_items", "window_id": "w:9", "limit": 2, "order": "newest"},
    {"action": "read_item", "item_id": "12", "limit_chars": 40},
]


def _history(layout: Layout) -> None:
    # an old reset (the floor), then windows with hits in each
    archive = encoded(
        [text_row("private needle", 0), manual_reset(1), text_row("needle a", 2), rollover(3)]
    )
    chat = encoded(
        [
            text_row("needle b", 4),
            text_row("plain c", 5),
            text_row("needle d", 6),
            rollover(9),
            text_row("needle e", 10),
            text_row("needle f", 11),
            text_row("needle g " + "long text " * 20, 12),
            text_row("needle h", 13),
        ]
    )
    write_history(layout, archive, chat)


def _append(layout: Layout) -> None:
    HistoryStore(layout, durable=False).append(
        [text_row(f"needle appended {i} " + "q" * 300, None, rid=f"n{i}") for i in range(40)]
    )


def _behind(layout: Layout, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("segue._retrieval.index_build.CATCH_UP_BYTES", 1024)


def _missing(layout: Layout, monkeypatch: pytest.MonkeyPatch) -> None:
    index_path(layout).unlink()
    monkeypatch.setattr(IndexBackend, "after_call", lambda self: None)


def _locked(layout: Layout, monkeypatch: pytest.MonkeyPatch) -> None:
    # another reader's catch-up holding the file: this call cannot write (nor read) it
    conn = sqlite3.connect(index_path(layout), isolation_level=None)
    conn.execute("BEGIN EXCLUSIVE")
    monkeypatch.setattr(IndexBackend, "after_call", lambda self: None)
    _HOLDERS.append(conn)


def _rebuilt(layout: Layout, monkeypatch: pytest.MonkeyPatch) -> None:
    rebuild(layout)  # a new index file: its positions are the transcript's, as before


_HOLDERS: list[sqlite3.Connection] = []

SETUPS: dict[str, Callable[[Layout, pytest.MonkeyPatch], None]] = {
    "behind": _behind,
    "missing": _missing,
    "locked": _locked,
    "rebuilt": _rebuilt,
    "scan-only": lambda layout, mp: None,
}


def _run(
    layout: Layout,
    args: dict[str, Any],
    first: SessionHistoryTool,
    rest: SessionHistoryTool,
    between: Callable[[], None],
) -> tuple[list[dict[str, Any]], list[str | None]]:
    """Page 1 with ``first``, then the append and ``between``, then every further page with
    ``rest``: the entries (read_item: the texts) and each later call's index problem."""
    got: list[dict[str, Any]] = []
    problems: list[str | None] = []
    result = call(first, args)
    _append(layout)
    between()
    tool = first
    while True:
        assert result["ok"], result
        got.extend(result.get("windows", result.get("items", [])))
        if "item" in result:
            got.append(result["item"])
        if result["nextCursor"] is None:
            return got, problems
        tool = rest
        result = call(tool, {**args, "cursor": result["nextCursor"]})
        problems.append(tool.index_problem)


@pytest.mark.parametrize("setup", list(SETUPS))
@pytest.mark.parametrize("args", CALLS, ids=lambda a: f"{a['action']}-{a.get('order', '')}")
def test_index_cursor_survives_a_verified_append(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: dict[str, Any], setup: str
) -> None:
    want_layout = Layout(tmp_path / "scan", "ws")
    _history(want_layout)
    scan = SessionHistoryTool(want_layout, use_index=False)
    want, _ = _run(want_layout, args, scan, scan, lambda: None)

    layout = Layout(tmp_path / "home", "ws")
    _history(layout)
    rebuild(layout)
    first = SessionHistoryTool(layout)
    rest = SessionHistoryTool(layout, use_index=setup != "scan-only")
    try:
        got, problems = _run(layout, args, first, rest, lambda: SETUPS[setup](layout, monkeypatch))
    finally:
        while _HOLDERS:
            _HOLDERS.pop().close()
    assert first.index_problem is None  # page 1 came from the index
    assert got == want
    assert all("private" not in str(e) for e in got)  # nothing from below the floor
    if setup in ("behind", "missing", "locked") and args["action"] != "read_item":
        assert problems and problems[0] is not None  # page 2 was answered by the scan
