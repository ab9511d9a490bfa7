"""SPEC.md §6: no look-back call over 1 s. The rebuild step a call runs after its answer stops
at the call's deadline, once it has indexed ``MIN_STEP_BYTES`` (so every step makes progress
and small histories are indexed in one step). Deterministic: the deadlines here are already
past, or never reached, so bytes alone decide where a step ends."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from segue._history.store import HistoryStore
from segue._messages import make_row
from segue._retrieval import SessionHistoryTool, index_steps
from segue._retrieval.backends import sqlite_index
from segue._retrieval.index_file import build_path, index_path
from segue._retrieval.index_steps import build_step
from segue._workspace import Layout
from tests.retrieval.helpers import call, entries

MIN = 32 << 10


def _history(layout: Layout, rows: int = 1200) -> int:
    store = HistoryStore(layout, durable=False)
    for start in range(0, rows, 100):
        store.append([make_row("user", f"step row {j} needle {'x' * (j % 90)}", id=f"r{j}")
                      for j in range(start, start + 100)])
    return layout.chat.stat().st_size


def _indexed(layout: Layout) -> int:
    conn = sqlite3.connect(f"file:{build_path(layout)}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT v FROM meta WHERE k = 'steps_pos'").fetchone()[0])
    finally:
        conn.close()


def test_a_step_past_its_deadline_indexes_the_minimum(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(index_steps, "MIN_STEP_BYTES", MIN)
    layout = Layout(tmp_path, "ws")
    size = _history(layout)
    assert size > 4 * MIN
    late = time.monotonic() - 1
    assert build_step(layout, deadline=late) is None
    first = _indexed(layout)
    # at least the minimum, then at most the lines of one look at the clock
    assert MIN <= first < MIN + index_steps._CHECK_LINES * 200
    assert build_step(layout, deadline=late) is None
    assert MIN <= _indexed(layout) - first < MIN + index_steps._CHECK_LINES * 200
    # without a deadline, bytes alone: the rest in one step
    assert build_step(layout) is not None
    assert index_path(layout).exists()


def test_calls_past_their_deadline_rebuild_in_bounded_steps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every call past its time: each runs a minimum step, the index comes back after about
    size / MIN_STEP_BYTES calls, and every answer is the scan's meanwhile."""
    monkeypatch.setattr(index_steps, "MIN_STEP_BYTES", MIN)
    monkeypatch.setattr(sqlite_index, "CALL_SECONDS", -1.0)
    layout = Layout(tmp_path, "ws")
    size = _history(layout)
    tool = SessionHistoryTool(layout)
    args = {"action": "search", "match": "literal", "query": "row 11", "limit": 3}
    want = entries(SessionHistoryTool(layout, use_index=False), args)
    assert len(want) > 10
    page = call(tool, args)
    got, calls = list(page["items"]), 1
    while not index_path(layout).exists():
        assert page["nextCursor"] is not None
        page = call(tool, {**args, "cursor": page["nextCursor"]})
        got += page["items"]
        calls += 1
        assert calls <= size // MIN + 1
    assert calls >= size // (MIN + index_steps._CHECK_LINES * 200)
    while page["nextCursor"] is not None:
        page = call(tool, {**args, "cursor": page["nextCursor"]})
        got += page["items"]
    assert got == want
    assert tool.index_problem is None
