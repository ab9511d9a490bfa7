"""SPEC.md §6/§7: the background builder rebuilds a lost index of a transcript of at most
``index_builder.WHOLE_BYTES`` whole, in one transaction into the side file, with the
rebuild's worker process on the other core (index_child.py: it runs no other thread, so it
may fork one), instead of by steps. It reports after each batch; once its parent is gone
(the pipe only the parent holds is at its end) it ends at the next batch without putting
anything in place; a side file where steps already committed is gone on with by steps.
No sleeps: the tests poll for state, with generous bounds."""

from __future__ import annotations

import os
import sqlite3
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from segue._history.store import HistoryStore
from segue._messages import make_row
from segue._retrieval import SessionHistoryTool, index_builder, index_steps
from segue._retrieval.index_file import build_path, index_path
from segue._workspace import Layout
from tests.retrieval.helpers import entries

ROOT = Path(__file__).resolve().parents[2]
JOIN = 120.0  # seconds: a generous bound on a whole small rebuild on a loaded machine
QUERIES: list[dict[str, Any]] = [
    {"action": "search", "match": "literal", "query": "needle a3 9 "},
    {"action": "search", "match": "literal", "query": "needle a1", "order": "oldest"},
    {"action": "read_item", "item_id": "5"},
    {"action": "list_windows"},
]

#: the builder's child, its rebuild held before its second batch is inserted (it creates
#: ``RELEASE.inside`` there, with the pids of its own child processes) until ``RELEASE``
#: appears
_HELD_CHILD = r"""
import os
import sys
import time
from pathlib import Path
from segue._retrieval import index_build, index_child

release = Path(sys.argv[5])
real = index_build.insert_batch
count = 0


def held(conn, batch):
    global count
    count += 1
    if count == 2:
        me = str(os.getpid())
        kids = [p.name for p in Path("/proc").iterdir() if p.name.isdigit()
                and (p / "stat").exists()
                and (p / "stat").read_text().rsplit(")", 1)[1].split()[1] == me]
        Path(str(release) + ".inside").write_text(" ".join(kids))
        while not release.exists():
            time.sleep(0.01)
    real(conn, batch)


index_build.insert_batch = held
sys.exit(index_child.main(sys.argv[1:5]))
"""


def _fill(layout: Layout, batches: int) -> None:
    store = HistoryStore(layout, durable=False)
    for b in range(batches):
        store.append([
            make_row("user", f"needle a{b} {i} " + "lorem ipsum " * 40, id=f"a{b}-{i}")
            for i in range(200)
        ])  # fmt: skip


@pytest.fixture(autouse=True)
def _no_builder_outlives_its_test() -> Iterator[None]:
    yield
    assert index_builder.stop(timeout=JOIN)


def _poll(done: Any, what: str) -> None:
    end = time.monotonic() + JOIN
    while not done():
        assert time.monotonic() < end, what
        time.sleep(0.01)


def _held(monkeypatch: pytest.MonkeyPatch, release: Path) -> None:
    monkeypatch.setattr(
        index_builder,
        "_command",
        lambda lay, step: [
            sys.executable, "-c", _HELD_CHILD, str(lay.home), lay.workspace_id, str(step),
            str(index_builder.WHOLE_BYTES), str(release),
        ],
    )  # fmt: skip
    path = os.pathsep.join([str(ROOT / "src"), *sys.path])
    monkeypatch.setattr(index_builder, "_env", lambda: {**os.environ, "PYTHONPATH": path})


def _steps_mark(path: Path) -> str | None:
    """The index's ``steps`` meta value: ``done`` when steps built it, None when whole."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        row = conn.execute("SELECT v FROM meta WHERE k = 'steps'").fetchone()
        return None if row is None else str(row[0])
    finally:
        conn.close()


def _finished(layout: Layout) -> index_builder.Builder:
    builder = index_builder.builder_for(layout)
    assert builder is not None
    assert index_builder.join(layout, JOIN), "the builder did not end"
    return builder


def _same_as_scan(layout: Layout) -> None:
    tool = SessionHistoryTool(layout, build_index=False)
    scan = SessionHistoryTool(layout, use_index=False, build_index=False)
    got = [entries(tool, q) for q in QUERIES]
    assert tool.index_problem is None
    assert all(got)
    assert got == [entries(scan, q) for q in QUERIES]


def test_a_lost_index_is_rebuilt_whole_by_the_child_with_its_worker(
    segue_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SEGUE_INDEX_WORKER", "on")  # whatever the machine's load
    layout = Layout(segue_home, "ws")
    _fill(layout, 20)
    release = segue_home / "release"
    _held(monkeypatch, release)
    tool = SessionHistoryTool(layout, background=True)
    assert tool.call(QUERIES[0])["ok"]  # from the scan; it starts the builder
    _poll(Path(f"{release}.inside").exists, "the rebuild never reached its second batch")
    kids = Path(f"{release}.inside").read_text().split()
    assert len(kids) == 1, kids  # the rebuild's worker, forked by the child
    assert not Path(f"{build_path(layout)}-journal").exists()  # one transaction, no journal
    release.touch()
    builder = _finished(layout)
    assert builder.outcome == "built"
    assert builder.steps >= 2  # a progress line per batch
    assert builder.pos == builder.size > 0
    assert _steps_mark(index_path(layout)) is None  # a whole rebuild wrote it, not steps
    _same_as_scan(layout)


def test_the_whole_rebuild_ends_once_its_parent_is_gone(
    segue_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    layout = Layout(segue_home, "ws")
    _fill(layout, 20)
    release = segue_home / "release"
    _held(monkeypatch, release)
    builder = index_builder.ensure(layout)
    _poll(Path(f"{release}.inside").exists, "the rebuild never reached its second batch")
    assert builder.proc is not None and builder.proc.stdin is not None
    builder.proc.stdin.close()  # as when the parent exits or is killed
    release.touch()
    builder = _finished(layout)
    assert builder.outcome == "stopped"
    assert not index_path(layout).exists()  # nothing put in place
    # the next builder starts afresh from what was left and builds the index
    monkeypatch.undo()
    index_builder.ensure(layout)
    assert _finished(layout).outcome == "built"
    _same_as_scan(layout)


def test_steps_committed_in_the_side_file_are_gone_on_with_by_steps(
    segue_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    layout = Layout(segue_home, "ws")
    _fill(layout, 8)
    assert index_steps.build_step(layout, 64 << 10) is None  # one step, committed
    monkeypatch.setattr(index_builder, "STEP_BYTES", 64 << 10)
    index_builder.ensure(layout)
    builder = _finished(layout)
    assert builder.outcome == "built"
    assert _steps_mark(index_path(layout)) == "done"  # the steps finished it
    _same_as_scan(layout)


def test_a_transcript_over_the_bound_is_built_by_steps(
    segue_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    layout = Layout(segue_home, "ws")
    _fill(layout, 8)
    monkeypatch.setattr(index_builder, "WHOLE_BYTES", 64 << 10)
    monkeypatch.setattr(index_builder, "STEP_BYTES", 256 << 10)
    index_builder.ensure(layout)
    builder = _finished(layout)
    assert builder.outcome == "built"
    assert builder.steps > 1
    assert _steps_mark(index_path(layout)) == "done"
    _same_as_scan(layout)
