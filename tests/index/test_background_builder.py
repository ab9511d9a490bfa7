"""SPEC.md §6/§7: in a process that lives on, a look-back call that finds the index untrusted
answers from the scan and starts one background builder per index file (index_builder.py),
which runs bounded steps back to back, each its own transaction under the side file's flock,
until the index is trusted. Calls never wait for it; ``kill -9`` loses at most one step; a
step held by another process ends the builder; ``SEGUE_INDEX_BUILDER=off`` falls back to one
step per call. No sleeps: the tests join the builder with a timeout."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from segue.history.store import HistoryStore
from segue.messages import make_row
from segue.retrieval import SessionHistoryTool, index_builder, index_steps
from segue.retrieval.index_file import build_path, index_path
from segue.retrieval.index_people import check_index
from segue.tools.builtin import session_history_tool
from segue.workspace import Layout
from tests.retrieval.helpers import entries

ROOT = Path(__file__).resolve().parents[2]
STEP = 64 << 10
JOIN = 120.0  # seconds: a generous bound on a whole small rebuild on a loaded machine
ARGS: dict[str, Any] = {"action": "search", "match": "literal", "query": "needle a3 9 "}
QUERIES: list[dict[str, Any]] = [
    ARGS,
    {"action": "search", "match": "literal", "query": "needle", "order": "oldest", "limit": 3},
    {"action": "search", "query": "needle lorem", "limit": 3},
    {"action": "read_item", "item_id": "5"},
    {"action": "list_windows"},
]


def _fill(layout: Layout, tag: str, batches: int, rows: int = 200) -> None:
    store = HistoryStore(layout, durable=False)
    for b in range(batches):
        store.append(
            [
                make_row("user", f"needle {tag}{b} {i} " + "lorem ipsum " * 40, id=f"{tag}{b}-{i}")
                for i in range(rows)
            ]
        )


@pytest.fixture(autouse=True)
def _small_steps(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Many steps per rebuild; and no builder outlives its test."""
    monkeypatch.setattr(index_steps, "STEP_BYTES", STEP)
    monkeypatch.setattr(index_steps, "MIN_STEP_BYTES", 16 << 10)
    yield
    assert index_builder.stop(timeout=JOIN)


def _scan_page(layout: Layout, args: dict[str, Any]) -> dict[str, Any]:
    page = SessionHistoryTool(layout, use_index=False, build_index=False).call(args)
    page.pop("nextCursor", None)
    return page


def _same_as_scan(tool: SessionHistoryTool, layout: Layout) -> None:
    scan = SessionHistoryTool(layout, use_index=False, build_index=False)
    compared = 0
    for args in QUERIES:
        got = entries(tool, args)
        assert got == entries(scan, args), args
        compared += len(got)
    assert compared > 0


def _clean(layout: Layout) -> None:
    assert HistoryStore(layout).verify().ok
    check = check_index(layout)
    assert check.state == "checked", check
    assert check.mismatches == ()


def _finished(layout: Layout) -> index_builder.Builder:
    assert index_builder.join(layout, JOIN), "the builder does not end"
    builder = index_builder.builder_for(layout)
    assert builder is not None
    return builder


def test_a_lost_index_is_rebuilt_between_calls(segue_home: Path) -> None:
    layout = Layout(segue_home, "ws")
    _fill(layout, "a", 4)
    tool = SessionHistoryTool(layout, background=True)
    first = tool.call(ARGS)
    first.pop("nextCursor", None)
    assert first == _scan_page(layout, ARGS)  # the bounded scan answered this call
    assert "rebuilding between calls" in (tool.index_problem or "")
    builder = _finished(layout)  # no further call needed
    assert builder.outcome == "built"
    assert builder.steps > 1  # back to back steps, not one whole rebuild
    assert index_path(layout).exists() and not build_path(layout).exists()
    _same_as_scan(tool, layout)
    assert tool.index_problem is None  # the next calls answer from the index
    _clean(layout)


def test_the_session_tool_rebuilds_in_the_background(segue_home: Path) -> None:
    layout = Layout(segue_home, "ws")
    _fill(layout, "a", 3)
    tool = session_history_tool(layout, None)  # what a session's model calls
    assert tool.call(ARGS)["ok"]
    assert _finished(layout).outcome == "built"
    entries(tool, ARGS)
    assert tool.index_problem is None


def test_calls_never_wait_for_the_builder_and_one_runs_per_index(
    segue_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    layout = Layout(segue_home, "ws")
    _fill(layout, "a", 4)
    inside, release = threading.Event(), threading.Event()
    flush = index_steps._flush

    def held(conn: Any, batch: Any) -> None:
        flush(conn, batch)
        if batch and threading.current_thread() is not threading.main_thread():
            inside.set()
            release.wait(JOIN)

    monkeypatch.setattr(index_steps, "_flush", held)
    one = SessionHistoryTool(layout, background=True)
    two = SessionHistoryTool(layout, background=True)
    try:
        assert one.call(ARGS)["ok"]
        assert inside.wait(JOIN)  # the builder is inside a step's transaction, held there
        for tool in (one, two, one):  # answered from the scan while the step is held
            page = tool.call(ARGS)
            page.pop("nextCursor", None)
            assert page == _scan_page(layout, ARGS)
            assert "rebuilding between calls" in (tool.index_problem or "")
        assert not release.is_set() and inside.is_set()
        names = [t.name for t in threading.enumerate() if t.name.startswith("segue-index-")]
        assert len(names) == 1, names
    finally:
        release.set()
    assert _finished(layout).outcome == "built"
    _same_as_scan(two, layout)
    assert two.index_problem is None
    _clean(layout)


def test_stop_keeps_the_steps_done_and_a_later_call_goes_on(
    segue_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    layout = Layout(segue_home, "ws")
    _fill(layout, "a", 4)
    stepped = threading.Event()
    step = index_steps.build_step

    def counted(*args: Any, **kwargs: Any) -> Any:
        done = step(*args, **kwargs)
        builder = index_builder.builder_for(layout)
        if builder is not None and builder.steps >= 1:
            stepped.set()  # the second step runs now: stop it there
            builder.stopping.wait(JOIN)
        return done

    monkeypatch.setattr(index_steps, "build_step", counted)
    tool = SessionHistoryTool(layout, background=True)
    assert tool.call(ARGS)["ok"]
    assert stepped.wait(JOIN)
    assert index_builder.stop(layout, timeout=JOIN)
    builder = _finished(layout)
    assert builder.outcome == "stopped" and builder.steps == 2
    assert not index_path(layout).exists() and build_path(layout).exists()
    monkeypatch.setattr(index_steps, "build_step", step)
    assert tool.call(ARGS)["ok"]  # still untrusted: the builder starts again, goes on
    assert _finished(layout).outcome == "built"
    _same_as_scan(tool, layout)
    _clean(layout)


def test_the_setting_turns_the_builder_off(
    segue_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(index_builder.ENV, "off")
    layout = Layout(segue_home, "ws")
    _fill(layout, "a", 4)
    tool = SessionHistoryTool(layout, background=True)
    assert tool.call(ARGS)["ok"]
    assert index_builder.builder_for(layout) is None  # no thread ...
    assert build_path(layout).exists()  # ... the call ran one step itself
    assert "one step per call" in (tool.index_problem or "")


_HOLDER = r"""
import sys
import threading
from pathlib import Path
from segue.retrieval import index_builder, index_steps
from segue.retrieval.tool import SessionHistoryTool
from segue.workspace import Layout

index_steps.STEP_BYTES = 64 << 10
index_steps.MIN_STEP_BYTES = 16 << 10
layout = Layout(Path(sys.argv[1]), "ws")
flush = index_steps._flush


def flush_then_hang(conn, batch):
    flush(conn, batch)
    builder = index_builder.builder_for(layout)
    if batch and builder is not None and builder.steps >= 2:  # inside the third step
        print("inside", flush=True)
        threading.Event().wait()


index_steps._flush = flush_then_hang
SessionHistoryTool(layout, background=True).call(
    {"action": "search", "match": "literal", "query": "needle"}
)
sys.stdin.readline()
"""


def test_kill_during_a_background_step_and_no_two_processes_step_at_once(
    segue_home: Path,
) -> None:
    from tests.index.test_steps import _steps_pos, inside_a_step

    layout = Layout(segue_home, "ws")
    _fill(layout, "a", 4)
    with inside_a_step(layout, _HOLDER):
        tool = SessionHistoryTool(layout, background=True)
        assert tool.call(ARGS)["ok"]  # the other process holds the side file
        builder = _finished(layout)
        assert builder.outcome == "another process is building the index"
        assert builder.steps == 0
    assert not index_path(layout).exists()
    assert _steps_pos(layout) > 0  # the two steps before the killed one stay
    _same_as_scan(SessionHistoryTool(layout, build_index=False), layout)
    assert tool.call(ARGS)["ok"]  # untrusted still: this call starts the builder again
    assert _finished(layout).outcome == "built"
    _same_as_scan(tool, layout)
    assert tool.index_problem is None
    _clean(layout)
