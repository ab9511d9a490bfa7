"""SPEC.md §6/§7: in a process that lives on, a look-back call that finds the index untrusted
answers from the scan and starts one builder process per index file (index_builder.py,
index_child.py), which runs bounded steps back to back, each its own transaction under the
side file's flock, until the index is trusted. Calls that come back to back get onto the
index; ``kill -9`` of the builder loses at most one step; the builder dies with its parent;
a step held by another process ends the builder; ``SEGUE_INDEX_BUILDER=off`` falls back to
one step per call. No sleeps in the tests: they poll for state, with generous bounds."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from segue._history.store import HistoryStore
from segue._messages import make_row
from segue._retrieval import SessionHistoryTool, index_builder, index_steps
from segue._retrieval.index_file import build_path, index_path
from segue._retrieval.index_people import check_index
from segue._tools.builtin import session_history_tool
from segue._workspace import Layout
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

#: the builder's child, held inside its third step's transaction (it creates the file
#: ``RELEASE.inside`` there) until the file ``RELEASE`` appears
_HELD_CHILD = r"""
import sys
import time
from pathlib import Path
from segue._retrieval import index_child, index_steps

release = Path(sys.argv[4])
inside = Path(sys.argv[4] + ".inside")
step, flush = index_steps.build_step, index_steps._flush
started = 0


def counted(*args, **kwargs):
    global started
    started += 1
    return step(*args, **kwargs)


def flush_then_hold(conn, batch):
    flush(conn, batch)
    if batch and started >= 3:
        inside.touch()
    while batch and started >= 3 and not release.exists():
        time.sleep(0.01)


index_steps.build_step, index_steps._flush = counted, flush_then_hold
sys.exit(index_child.main(sys.argv[1:4]))
"""

#: a process that lives on: a background look-back call, its builder held as above; prints
#: the builder's pid once it is inside that step, then waits to be killed
_PARENT = r"""
import sys
import time
from pathlib import Path
from segue._retrieval import index_builder
from segue._retrieval.tool import SessionHistoryTool
from segue._workspace import Layout

held, release = sys.argv[2], sys.argv[3]
index_builder.STEP_BYTES = 64 << 10
index_builder._command = lambda layout, step: [
    sys.executable, "-c", held, str(layout.home), layout.workspace_id, str(step), release
]
layout = Layout(Path(sys.argv[1]), "ws")
SessionHistoryTool(layout, background=True).call(
    {"action": "search", "match": "literal", "query": "needle"}
)
inside = Path(release + ".inside")
while not inside.exists():
    time.sleep(0.01)
print(index_builder.builder_for(layout).pid(), flush=True)
sys.stdin.readline()
"""


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
    """Many steps per rebuild (never a whole one: tests/index/test_whole_builder.py); and
    no builder outlives its test."""
    monkeypatch.setattr(index_builder, "STEP_BYTES", STEP)
    monkeypatch.setattr(index_builder, "WHOLE_BYTES", 0)
    yield
    assert index_builder.stop(timeout=JOIN)


def _poll(done: Any, what: str, bound: float = JOIN) -> None:
    """Wait for ``done()`` (looked at every 10 ms) for at most ``bound`` seconds."""
    end = time.monotonic() + bound
    while not done():
        assert time.monotonic() < end, what
        time.sleep(0.01)


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), *sys.path])}


@contextmanager
def _held_builder(layout: Layout, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Builders of this process held inside their third step until the yielded file is
    created (the block's end creates it)."""
    release = layout.home / "release-the-step"
    monkeypatch.setattr(
        index_builder,
        "_command",
        lambda lay, step: [
            sys.executable, "-c", _HELD_CHILD, str(lay.home), lay.workspace_id, str(step),
            str(release),
        ],
    )
    monkeypatch.setattr(index_builder, "_env", _env)
    try:
        yield release
    finally:
        release.touch()


def _wait_inside(layout: Layout, release: Path) -> None:
    """Until the held builder is inside its third step's transaction."""
    _poll(Path(f"{release}.inside").exists, "the builder never got inside its third step")
    assert Path(f"{build_path(layout)}-journal").exists(), "not inside the transaction"


def _alive(pid: int) -> bool:
    """A process that exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _children() -> list[int]:
    """This process's child processes (not reaped ones included)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid():
                found.append(int(entry.name))
    return found


def _steps_pos(layout: Layout) -> int:
    from tests.index.test_steps import _steps_pos as pos

    return pos(layout)


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


def _on_index(tool: SessionHistoryTool, page: dict[str, Any]) -> bool:
    return tool.index_problem is None and page["scanned"]["rows"] <= len(page["items"])


def test_a_lost_index_is_rebuilt_by_a_child_process(segue_home: Path) -> None:
    layout = Layout(segue_home, "ws")
    _fill(layout, "a", 4)
    tool = SessionHistoryTool(layout, background=True)
    first = tool.call(ARGS)
    first.pop("nextCursor", None)
    assert first == _scan_page(layout, ARGS)  # the bounded scan answered this call
    assert "rebuilding between calls" in (tool.index_problem or "")
    builder = index_builder.builder_for(layout)
    assert builder is not None and builder.proc is not None
    assert builder.pid() != os.getpid()
    builder = _finished(layout)  # no further call needed
    assert builder.outcome == "built"
    assert builder.steps > 1  # back to back steps, not one whole rebuild
    assert builder.proc is not None and builder.proc.returncode == 0  # reaped: no zombie
    assert builder.pid() not in _children()
    assert index_path(layout).exists() and not build_path(layout).exists()
    _same_as_scan(tool, layout)
    assert tool.index_problem is None  # the next calls answer from the index
    _clean(layout)


def test_calls_back_to_back_reach_the_index(segue_home: Path) -> None:
    """No pause between calls (a paging look-back, then the next query): the calls still
    get onto the index, and every page is the scan's answer."""
    layout = Layout(segue_home, "ws")
    _fill(layout, "a", 6)
    tool = SessionHistoryTool(layout, background=True, max_rows=100)
    scan = SessionHistoryTool(layout, use_index=False, build_index=False, max_rows=100)
    args = {"action": "search", "match": "literal", "query": "needle", "limit": 5}
    calls, cursor = 0, None
    while True:
        calls += 1
        assert calls < 10_000, "never on the index"
        page = tool.call(args if cursor is None else {**args, "cursor": cursor})
        assert page["ok"], page
        if _on_index(tool, page):
            break
        cursor = page["nextCursor"]  # None: that look-back is over, the next one begins
    assert calls > 1  # the first call found no index
    got = entries(tool, args)
    assert got == entries(scan, args) and got
    assert _finished(layout).outcome == "built"
    _clean(layout)


def test_the_session_tool_rebuilds_in_the_background(segue_home: Path) -> None:
    layout = Layout(segue_home, "ws")
    _fill(layout, "a", 3)
    tool = session_history_tool(layout, None)  # what a session's model calls
    assert tool.call(ARGS)["ok"]
    assert _finished(layout).outcome == "built"
    entries(tool, ARGS)
    assert tool.index_problem is None


def test_calls_go_on_from_the_scan_and_one_builder_runs_per_index(
    segue_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    layout = Layout(segue_home, "ws")
    _fill(layout, "a", 4)
    one = SessionHistoryTool(layout, background=True)
    two = SessionHistoryTool(layout, background=True)
    with _held_builder(layout, monkeypatch) as release:
        assert one.call(ARGS)["ok"]
        _wait_inside(layout, release)
        builder = index_builder.builder_for(layout)
        assert builder is not None
        pid = builder.pid()
        _poll(lambda: builder.steps == 2, "the two steps before were not reported")
        for tool in (one, two, one):  # answered from the scan while the step is held
            page = tool.call(ARGS)
            page.pop("nextCursor", None)
            assert page == _scan_page(layout, ARGS)
            problem = tool.index_problem or ""
            assert "rebuilding between calls (0.1 of 0.5 MB indexed)" in problem, problem
        assert builder.pid() == pid and builder.running()
        assert _children() == [pid]
        assert not release.exists()
    assert _finished(layout).outcome == "built"
    _same_as_scan(two, layout)
    assert two.index_problem is None
    _clean(layout)


def test_kill_9_of_the_builder_loses_one_step(
    segue_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    layout = Layout(segue_home, "ws")
    _fill(layout, "a", 4)
    tool = SessionHistoryTool(layout, background=True)
    with _held_builder(layout, monkeypatch) as release:
        assert tool.call(ARGS)["ok"]
        _wait_inside(layout, release)
        builder = index_builder.builder_for(layout)
        assert builder is not None and builder.pid() is not None
        os.kill(builder.pid(), signal.SIGKILL)  # type: ignore[arg-type]
        builder = _finished(layout)
        assert builder.outcome == f"the builder process ended (exit status {-signal.SIGKILL})"
        assert builder.steps == 2
    assert not index_path(layout).exists()
    assert _steps_pos(layout) > 0  # the two steps before the killed one stay
    _same_as_scan(SessionHistoryTool(layout, build_index=False), layout)
    assert tool.call(ARGS)["ok"]  # untrusted still: this call starts a builder again
    assert _finished(layout).outcome == "built"
    _same_as_scan(tool, layout)
    assert tool.index_problem is None
    _clean(layout)


def test_stop_ends_a_builder_held_inside_a_step(
    segue_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    layout = Layout(segue_home, "ws")
    _fill(layout, "a", 4)
    tool = SessionHistoryTool(layout, background=True)
    with _held_builder(layout, monkeypatch) as release:
        assert tool.call(ARGS)["ok"]
        _wait_inside(layout, release)
        builder = index_builder.builder_for(layout)
        assert builder is not None
        assert index_builder.stop(layout, timeout=JOIN)
        assert not builder.running() and builder.pid() not in _children()
    assert not index_path(layout).exists() and _steps_pos(layout) > 0
    assert tool.call(ARGS)["ok"]  # a later call starts it again; it goes on
    assert _finished(layout).outcome == "built"
    _same_as_scan(tool, layout)
    _clean(layout)


def test_the_builder_dies_with_its_parent(segue_home: Path) -> None:
    """``kill -9`` of the process that started the builder: the builder, held inside a
    step, ends by itself (it reads a pipe only its parent held), and the index it leaves
    behind is rebuilt correctly by the next process."""
    layout = Layout(segue_home, "ws")
    _fill(layout, "a", 4)
    release = segue_home / "release-the-step"
    parent = subprocess.Popen(
        [sys.executable, "-c", _PARENT, str(segue_home), _HELD_CHILD, str(release)],
        cwd=ROOT,
        env=_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        assert _alive(child) and child != parent.pid
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        _poll(lambda: not _alive(child), "the builder outlived its parent")
        assert not release.exists()  # it ended inside the held step, not by its release
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
        for pipe in (parent.stdin, parent.stdout):
            if pipe is not None:
                pipe.close()
    assert not index_path(layout).exists() and _steps_pos(layout) > 0
    tool = SessionHistoryTool(layout, background=True)
    assert tool.call(ARGS)["ok"]
    assert _finished(layout).outcome == "built"
    _same_as_scan(tool, layout)
    _clean(layout)


def test_the_setting_turns_the_builder_off(
    segue_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(index_builder.ENV, "off")
    monkeypatch.setattr(index_steps, "STEP_BYTES", STEP)  # the call's one step: not all
    layout = Layout(segue_home, "ws")
    _fill(layout, "a", 4)
    tool = SessionHistoryTool(layout, background=True)
    assert tool.call(ARGS)["ok"]
    assert index_builder.builder_for(layout) is None  # no builder process ...
    assert _children() == []
    assert build_path(layout).exists()  # ... the call ran one step itself
    assert "one step per call" in (tool.index_problem or "")


def test_a_builder_finding_another_process_stepping_ends(segue_home: Path) -> None:
    from tests.index.test_steps import _CHILD, inside_a_step

    layout = Layout(segue_home, "ws")
    _fill(layout, "a", 4)
    with inside_a_step(layout, _CHILD):  # another process inside a step of its own
        tool = SessionHistoryTool(layout, background=True)
        assert tool.call(ARGS)["ok"]
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


def _stream_in_progress(layout: Layout) -> None:
    """A Xum stream in progress: ``partial.json`` newer than the transcript."""
    partial = layout.session_dir / "partial.json"
    partial.write_text("{}")
    later = layout.chat.stat().st_mtime_ns + 10**9
    os.utime(partial, ns=(later, later))


def _stream_ended(layout: Layout) -> None:
    (layout.session_dir / "partial.json").unlink()


def _untracked_append(layout: Layout) -> None:
    """Bytes no receipt vouches for (an untracked append): the snapshot is not trusted."""
    with open(layout.chat, "ab") as f:
        f.write(b'{"torn": ')


def _recovered(layout: Layout) -> None:
    """A command that writes: recovery runs first, then the append."""
    row = make_row("user", "needle after 0 " + "lorem ipsum " * 40, id="after")
    HistoryStore(layout, durable=False).append([row])


@pytest.mark.parametrize(
    ("hinder", "release", "why"),
    [
        (_stream_in_progress, _stream_ended, "a Xum stream is in progress"),
        (_untracked_append, _recovered, "the receipt does not vouch"),
    ],
)
def test_a_builder_that_cannot_succeed_is_not_started_again_until_the_files_change(
    segue_home: Path, hinder: Any, release: Any, why: str
) -> None:
    layout = Layout(segue_home, "ws")
    _fill(layout, "a", 3)
    hinder(layout)
    tool = SessionHistoryTool(layout, background=True)
    assert tool.call(ARGS)["ok"]  # answered from the scan
    builder = _finished(layout)
    assert why in (builder.outcome or ""), builder.outcome
    failed = builder.pid()
    for _ in range(3):  # nothing changed: no builder again, and no call waits for one
        page = tool.call(ARGS)
        assert page["ok"], page
        assert builder.pid() == failed and not builder.running()
        assert _children() == []
        assert f"not rebuilt: {why}" in (tool.index_problem or ""), tool.index_problem
    assert not index_path(layout).exists()
    release(layout)  # the files change: the next call starts a builder, which builds
    assert tool.call(ARGS)["ok"]
    builder = _finished(layout)
    assert builder.pid() != failed
    assert builder.outcome == "built"
    _same_as_scan(tool, layout)
    assert tool.index_problem is None


def test_a_lost_index_is_rebuilt_from_the_tools_making(
    segue_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session opening over a lost index: its builder starts as the tool is made, so the
    look-back's first call (after the model's first step) already answers from the index."""
    from segue._retrieval.backends import sqlite_index

    layout = Layout(segue_home, "ws")
    _fill(layout, "a", 4)
    size = layout.chat.stat().st_size
    monkeypatch.setattr(sqlite_index, "EARLY_BYTES", size + 1)
    SessionHistoryTool(layout, background=True)  # shorter than that: the first call starts it
    assert index_builder.builder_for(layout) is None
    monkeypatch.setattr(sqlite_index, "EARLY_BYTES", size)
    SessionHistoryTool(layout)  # a one-shot command's tool: never
    assert index_builder.builder_for(layout) is None
    tool = session_history_tool(layout, None)  # what a session's model calls, as it opens
    builder = index_builder.builder_for(layout)
    assert builder is not None and builder.proc is not None, "no builder at the tool's making"
    assert _finished(layout).outcome == "built"
    page = tool.call(ARGS)  # the first call
    assert _on_index(tool, page), tool.index_problem
    _same_as_scan(tool, layout)


def test_only_a_lost_index_is_rebuilt_from_the_tools_making(
    segue_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An index that is there but not trusted (a new epoch: perhaps a failed send's, which
    the first call re-derives at one row's cost) waits for the first call."""
    from segue._retrieval.backends import sqlite_index
    from segue._retrieval.index_build import rebuild
    from tests.retrieval.helpers import stamp_receipt

    monkeypatch.setattr(sqlite_index, "EARLY_BYTES", 0)
    layout = Layout(segue_home, "ws")
    _fill(layout, "a", 2)
    rebuild(layout)
    stamp_receipt(layout)  # a new epoch: the index is not trusted any more
    tool = SessionHistoryTool(layout, background=True)
    assert index_builder.builder_for(layout) is None
    assert tool.call(ARGS)["ok"]
    assert "rebuilding between calls" in (tool.index_problem or ""), tool.index_problem
    assert _finished(layout).outcome == "built"


def test_a_lasting_failure_is_tried_again_after_a_while(
    segue_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Some lasting causes pass with no file changing (a full disk freed): once
    ``RETRY_SECONDS`` have passed, the next untrusted call starts a builder again."""
    layout = Layout(segue_home, "ws")
    _fill(layout, "a", 3)
    _stream_in_progress(layout)
    tool = SessionHistoryTool(layout, background=True)
    assert tool.call(ARGS)["ok"]
    failed = _finished(layout).pid()
    assert tool.call(ARGS)["ok"]
    assert _finished(layout).pid() == failed  # within the while: not again
    monkeypatch.setattr(index_builder, "RETRY_SECONDS", 0.0)
    assert tool.call(ARGS)["ok"]
    builder = _finished(layout)
    assert builder.pid() != failed, "no builder was started again after the while"
    assert "a Xum stream is in progress" in (builder.outcome or ""), builder.outcome


@pytest.mark.parametrize("link", ["chat", "archive"])
def test_a_transcript_behind_a_symbolic_link_never_stops_the_tools_making(
    segue_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, link: str
) -> None:
    """A lost index over a transcript that is a symbolic link: the tool (a session's,
    ``segue mcp serve``'s) is still made, and its calls say what is wrong in one line."""
    from segue._retrieval.backends import sqlite_index

    monkeypatch.setattr(sqlite_index, "EARLY_BYTES", 0)
    layout = Layout(segue_home, "ws")
    _fill(layout, "a", 2)
    path = layout.chat if link == "chat" else layout.archive
    if link == "archive":
        path.write_bytes(layout.chat.read_bytes())
    real = tmp_path / "real.jsonl"
    real.write_bytes(path.read_bytes())
    path.unlink()
    path.symlink_to(real)
    tool = session_history_tool(layout, None)  # raised FileError before
    assert index_builder.builder_for(layout) is None
    page = tool.call(ARGS)
    assert not page["ok"], page
    assert "symbolic link" in str(page), page
    assert not index_path(layout).exists()
