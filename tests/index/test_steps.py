"""SPEC.md §7: a call that finds no trusted index answers from the bounded scan, and the index
is rebuilt one bounded step per call (index_steps.py) into the side file, renamed in only
once complete and only if the transcript was not rewritten meanwhile. Steps survive verified
appends between them, start afresh after a rewrite or from a side file they did not write,
and a ``kill -9`` in the middle of a step loses only that step: answers stay right and
``verify`` is clean."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from segue._history.store import HistoryStore
from segue._messages import make_row
from segue._retrieval import SessionHistoryTool, index_steps
from segue._retrieval.index_build import rebuild
from segue._retrieval.index_file import build_path, index_path
from segue._retrieval.index_people import check_index
from segue._retrieval.index_steps import build_step
from segue._workspace import Layout
from tests.retrieval.helpers import entries, stamp_receipt

ROOT = Path(__file__).resolve().parents[2]
STEP = 64 << 10
QUERIES: list[dict[str, Any]] = [
    {"action": "search", "match": "literal", "query": "needle a0 7 "},
    {"action": "search", "match": "literal", "query": "needle", "order": "oldest", "limit": 3},
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


def _steps_pos(layout: Layout) -> int:
    """How far the side file's steps have read (opening it rolls a killed step back)."""
    conn = sqlite3.connect(build_path(layout))
    try:
        row = conn.execute("SELECT v FROM meta WHERE k = 'steps_pos'").fetchone()
    finally:
        conn.close()
    return int(row[0])


def _finish(layout: Layout, step: int = STEP) -> int:
    """Run steps until the index is in place; how many it took."""
    for steps in range(1, 10_000):
        if build_step(layout, step) is not None:
            return steps
    raise AssertionError("the steps do not end")


def _same_as_scan(tool: SessionHistoryTool, layout: Layout) -> None:
    scan = SessionHistoryTool(layout, use_index=False)
    for args in QUERIES:
        assert entries(tool, args) == entries(scan, args), args


def _clean(layout: Layout) -> None:
    assert HistoryStore(layout).verify().ok
    check = check_index(layout)
    assert check.state == "checked", check
    assert check.mismatches == ()


@pytest.fixture
def small_steps(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(index_steps, "STEP_BYTES", STEP)
    return STEP


def test_a_missing_index_is_rebuilt_a_bounded_step_per_call(
    segue_home: Path, small_steps: int
) -> None:
    layout = Layout(segue_home, "ws")
    _fill(layout, "a", 4)
    size = layout.chat.stat().st_size
    tool = SessionHistoryTool(layout)
    args = {"action": "search", "match": "literal", "query": "needle a3 9 "}
    first = tool.call(args)
    want = SessionHistoryTool(layout, use_index=False, build_index=False).call(args)
    assert first.pop("nextCursor") and want.pop("nextCursor")
    assert first == want  # the bounded scan's page
    assert "no index" in (tool.index_problem or "")
    assert not index_path(layout).exists()  # no whole rebuild inside the call
    assert 0 < _steps_pos(layout) <= small_steps + 1024
    steps = 1
    while not index_path(layout).exists():
        _same_as_scan(tool, layout)  # each of these calls also runs a step
        steps += len(QUERIES)
        assert steps < 4 * size // small_steps, "the steps do not end"
    assert not build_path(layout).exists()
    entries(tool, QUERIES[0])
    assert tool.index_problem is None
    _same_as_scan(tool, layout)
    _clean(layout)


def test_steps_go_on_across_verified_appends_and_start_afresh_after_a_rewrite(
    segue_home: Path,
) -> None:
    layout = Layout(segue_home, "ws")
    _fill(layout, "a", 3)
    assert build_step(layout, STEP) is None
    at = _steps_pos(layout)
    _fill(layout, "b", 1)  # a verified append: the build goes on from where it was
    assert build_step(layout, STEP) is None
    assert _steps_pos(layout) > at
    at = _steps_pos(layout)
    stamp_receipt(layout)  # a new epoch: what was built is not this transcript's any more
    assert build_step(layout, STEP) is None
    assert _steps_pos(layout) < at
    _finish(layout)
    tool = SessionHistoryTool(layout)
    _same_as_scan(tool, layout)
    assert tool.index_problem is None
    _clean(layout)


@pytest.mark.parametrize("leftover", ["garbage", "killed rebuild", "complete index"])
def test_a_side_file_the_steps_did_not_write_is_started_afresh(
    segue_home: Path, leftover: str
) -> None:
    layout = Layout(segue_home, "ws")
    _fill(layout, "a", 2)
    side = build_path(layout)
    if leftover == "garbage":
        side.write_bytes(b"SQLite format 3\x00" + os.urandom(8000))
    else:
        rebuild(layout)
        os.replace(index_path(layout), side)
        if leftover == "killed rebuild":  # journal off, cut short: what a kill -9 leaves
            with open(side, "r+b") as f:
                f.truncate(side.stat().st_size // 2)
    assert build_step(layout, STEP) is None  # not renamed in as it was: built again
    assert not index_path(layout).exists()
    _finish(layout)
    _same_as_scan(SessionHistoryTool(layout), layout)
    _clean(layout)


def test_a_line_longer_than_a_step_is_indexed_whole(segue_home: Path) -> None:
    layout = Layout(segue_home, "ws")
    store = HistoryStore(layout, durable=False)
    store.append([make_row("user", "needle huge " + "z" * (300 << 10), id="h")])
    _fill(layout, "a", 1, rows=20)
    assert _finish(layout, 16 << 10) < 100  # past the long line, not stuck before it
    _same_as_scan(SessionHistoryTool(layout), layout)
    _clean(layout)


_CHILD = r"""
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from segue._retrieval import index_steps
from segue._retrieval.tool import SessionHistoryTool
from segue._workspace import Layout

index_steps.STEP_BYTES = 64 << 10
calls = 0
flush = index_steps._flush


def flush_then_wait(conn, batch):
    flush(conn, batch)
    if calls >= 2 and batch:  # inside the third step's transaction: say so, then hang
        print("inside", flush=True)
        sys.stdin.readline()


index_steps._flush = flush_then_wait
tool = SessionHistoryTool(Layout(Path(sys.argv[1]), "ws"))
for _ in range(100):
    tool.call({"action": "search", "match": "literal", "query": "needle"})
    calls += 1
print("never inside a third step", flush=True)
"""


@contextmanager
def inside_a_step(layout: Layout, script: str) -> Iterator[None]:
    """A child process running ``script`` (given the home) stopped inside a step's
    transaction until the block ends, then killed with SIGKILL."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), *sys.path])}
    proc = subprocess.Popen(
        [sys.executable, "-c", script, str(layout.home)],
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == b"inside\n"
        assert Path(f"{build_path(layout)}-journal").exists(), "not inside the transaction"
        yield
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                pipe.close()


def test_kill_during_a_step(segue_home: Path) -> None:
    layout = Layout(segue_home, "ws")
    _fill(layout, "a", 4)
    with inside_a_step(layout, _CHILD):
        pass
    assert not index_path(layout).exists()
    assert _steps_pos(layout) > 0  # the two steps before the killed one stay
    tool = SessionHistoryTool(layout)
    for _ in range(1000):
        if index_path(layout).exists():
            break
        _same_as_scan(tool, layout)
    entries(tool, QUERIES[0])
    assert tool.index_problem is None
    _same_as_scan(tool, layout)
    _clean(layout)


def test_an_index_that_disagrees_with_the_transcript_is_not_used_again(
    segue_home: Path,
) -> None:
    layout = Layout(segue_home, "ws")
    _fill(layout, "a", 1, rows=30)
    rebuild(layout)
    conn = sqlite3.connect(index_path(layout))
    conn.execute("UPDATE rows SET digest = zeroblob(16) WHERE digest IS NOT NULL")
    conn.commit()
    conn.close()
    tool = SessionHistoryTool(layout)
    scan = SessionHistoryTool(layout, use_index=False)
    args = {"action": "read_item", "item_id": "3"}
    assert entries(tool, args) == entries(scan, args)
    assert "differs" in (tool.index_problem or "")
    entries(tool, args)  # the small transcript took one step: a new index, trusted
    assert tool.index_problem is None
    _clean(layout)


def test_catch_up_gets_past_a_line_longer_than_its_bound(
    segue_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from segue._retrieval import index_build

    layout = Layout(segue_home, "ws")
    _fill(layout, "a", 1, rows=20)
    rebuild(layout)
    HistoryStore(layout, durable=False).append(
        [make_row("user", "needle huge " + "z" * (300 << 10), id="h")]
    )
    _fill(layout, "b", 1, rows=20)
    monkeypatch.setattr(index_build, "CATCH_UP_BYTES", 16 << 10)
    tool = SessionHistoryTool(layout)
    args = {"action": "read_item", "item_id": "m:b0-19"}
    for _ in range(100):
        assert entries(tool, args) == entries(SessionHistoryTool(layout, use_index=False), args)
        if tool.index_problem is None:
            break
    else:
        raise AssertionError("the catch-up never got past the long line")
    _same_as_scan(tool, layout)
    _clean(layout)


def test_a_finished_step_that_cannot_be_put_in_place_leaves_the_answer_standing(
    segue_home: Path,
) -> None:
    """The last step's rename fails (the index's path is a directory): the call still answers
    from the scan, says why the index was not rebuilt, and never raises."""
    layout = Layout(segue_home, "blocked")
    _fill(layout, "a", 1, rows=20)
    index_path(layout).mkdir()
    want = SessionHistoryTool(layout, build_index=False).call(QUERIES[0])
    tool = SessionHistoryTool(layout)
    for _ in range(3):
        assert tool.call(QUERIES[0]) == want
    assert "not rebuilt" in (tool.index_problem or ""), tool.index_problem
    assert index_path(layout).is_dir()


#: steps until the last one has committed, then the process dies before its rename (as a
#: builder whose parent exits there, or a ``kill -9`` at that instant, leaves things)
_DIES_BEFORE_THE_RENAME = r"""
import os
import sys
from pathlib import Path
from segue._retrieval import index_steps
from segue._workspace import Layout

os.replace = lambda *args: os._exit(9)
layout = Layout(Path(sys.argv[1]), "ws")
while index_steps.build_step(layout, 64 << 10) is None:
    pass
"""


def test_a_whole_side_file_its_last_step_committed_is_put_in_place_not_built_again(
    segue_home: Path, small_steps: int
) -> None:
    layout = Layout(segue_home, "ws")
    _fill(layout, "a", 4)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), *sys.path])}
    done = subprocess.run(
        [sys.executable, "-c", _DIES_BEFORE_THE_RENAME, str(segue_home)], env=env, check=False
    )
    assert done.returncode == 9
    assert build_path(layout).exists() and not index_path(layout).exists()
    _fill(layout, "b", 1, rows=5)  # a verified append since: still this transcript's build
    tool = SessionHistoryTool(layout)
    args = QUERIES[0]
    first = tool.call(args)
    assert first["ok"] and "no index" in (tool.index_problem or "")  # the scan's page ...
    assert index_path(layout).exists() and not build_path(layout).exists()  # ... then in place
    entries(tool, args)  # the next call is on the index, caught up with the append
    assert tool.index_problem is None
    _same_as_scan(tool, layout)
    _clean(layout)


def test_a_mismatching_index_is_removed_but_not_a_new_one_put_in_its_place_meanwhile(
    segue_home: Path, small_steps: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from segue._retrieval import index_pages

    layout = Layout(segue_home, "ws")
    _fill(layout, "a", 4)
    rebuild(layout)
    fresh = segue_home / "fresh-index.sqlite"
    os.replace(index_path(layout), fresh)
    rebuild(layout)
    conn = sqlite3.connect(index_path(layout))  # the index in place disagrees with the rows
    with conn:
        conn.execute("UPDATE rows SET digest = zeroblob(16) WHERE kind = 0")
    conn.close()
    args = QUERIES[0]
    page = index_pages.ACTIONS[args["action"]]

    def placed_meanwhile(*a: Any, **k: Any) -> Any:
        """A builder renames a new index in while this call reads the old one."""
        if fresh.exists():
            os.replace(fresh, index_path(layout))
        return page(*a, **k)

    monkeypatch.setitem(index_pages.ACTIONS, args["action"], placed_meanwhile)
    tool = SessionHistoryTool(layout)
    assert tool.call(args)["ok"]
    assert "differs from the index" in (tool.index_problem or ""), tool.index_problem
    assert not fresh.exists() and index_path(layout).exists()  # the new one stays
    monkeypatch.setitem(index_pages.ACTIONS, args["action"], page)
    entries(tool, args)
    assert tool.index_problem is None
    _same_as_scan(tool, layout)
    # with nothing put in its place, a mismatching index is removed (then rebuilt)
    conn = sqlite3.connect(index_path(layout))
    with conn:
        conn.execute("UPDATE rows SET digest = zeroblob(16) WHERE kind = 0")
    conn.close()
    assert tool.call(args)["ok"]
    assert "differs from the index" in (tool.index_problem or ""), tool.index_problem
    assert not index_path(layout).exists()
    assert not list(layout.session_dir.glob("*distrusted*"))


def test_an_index_a_killed_call_left_moved_aside_is_removed_by_the_next_removal(
    segue_home: Path, small_steps: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call killed between moving a mismatching index aside and removing it leaves a file
    as large as the index; the next call that removes one sweeps it (its process is gone),
    never one of a live process."""
    from segue._retrieval.backends import sqlite_index

    layout = Layout(segue_home, "ws")
    _fill(layout, "a", 4)
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    left = index_path(layout).with_name(f"{index_path(layout).name}.distrusted-{gone.pid}")
    left.write_bytes(b"x" * 4096)
    alive = index_path(layout).with_name(f"{index_path(layout).name}.distrusted-1")
    alive.write_bytes(b"y" * 4096)  # pid 1 is always there
    monkeypatch.setattr(sqlite_index, "_ASIDE_SECONDS", 0.0)
    rebuild(layout)
    conn = sqlite3.connect(index_path(layout))
    with conn:
        conn.execute("UPDATE rows SET digest = zeroblob(16) WHERE kind = 0")
    conn.close()
    tool = SessionHistoryTool(layout)
    assert tool.call(QUERIES[0])["ok"]
    assert "differs from the index" in (tool.index_problem or ""), tool.index_problem
    assert not left.exists(), "the left-over file was not removed"
    assert alive.exists()
    assert not index_path(layout).exists()
