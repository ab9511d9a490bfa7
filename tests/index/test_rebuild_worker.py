"""A rebuild whose rows a forked worker analyses (segue._retrieval.index_build_worker) makes
the same index as one that analyses them itself, row for row and token for token, on
histories of every line kind (windows opened in either process's batches, floors, damaged
lines, a torn tail); and a worker that dies or fails never puts an index in place.

``SEGUE_INDEX_WORKER=on`` forces the worker whatever the size; batches of a few lines put
boundaries in both processes' batches."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from segue._retrieval import index_build_split, index_build_worker
from segue._retrieval.index_build import NotBuilt, rebuild
from segue._retrieval.index_file import build_path, index_path
from segue._retrieval.reader import HistoryMoved
from segue._workspace import Layout
from tests.index.histories import lines_of, ops
from tests.retrieval.helpers import stamp_receipt, write_history

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


class _OneThread:
    """``threading`` as the worker's fork rule sees it in a process of one thread."""

    @staticmethod
    def active_count() -> int:
        return 1


@pytest.fixture(autouse=True)
def _alone(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The suite's own process keeps idle threads of earlier tests (readers of finished
    children), which the fork rule rightly refuses to fork beside; these tests are about
    what a worker builds, so they see the process as a segue command sees its own."""
    if request.node.name != "test_no_worker_is_forked_beside_another_thread":
        monkeypatch.setattr(index_build_worker, "threading", _OneThread)


def test_no_worker_is_forked_beside_another_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    monkeypatch.setenv("SEGUE_INDEX_WORKER", "on")
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert not index_build_worker.wanted(1 << 30)
    finally:
        stop.set()
        other.join()
    monkeypatch.setattr(index_build_worker, "threading", _OneThread)
    assert index_build_worker.wanted(1 << 30)


def _dump(layout: Layout) -> dict[str, list[Any]]:
    """Everything the index holds but its random ``lexicon`` name."""
    conn = sqlite3.connect(index_path(layout))
    try:
        out: dict[str, list[Any]] = {
            "rows": conn.execute("SELECT * FROM rows ORDER BY pos").fetchall(),
            "meta": sorted(r for r in conn.execute("SELECT k, v FROM meta") if r[0] != "lexicon"),
            "lex": conn.execute("SELECT id, term FROM lex ORDER BY id").fetchall(),
            "docsize": conn.execute("SELECT * FROM words_docsize ORDER BY id").fetchall(),
        }
        tables = (("lit", "row"), ("words", "instance"), ("lexgrams", "row"), ("pwords", "row"))
        for table, kind in tables:
            conn.execute(
                f"CREATE VIRTUAL TABLE temp.v_{table} USING fts5vocab(main, {table}, {kind})"
            )
            out[table] = conn.execute(f"SELECT * FROM temp.v_{table}").fetchall()
        return out
    finally:
        conn.close()


def _both(layout: Layout, monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, Any], ...]:
    forks = []
    fork = os.fork

    def counted() -> int:
        pid = fork()
        if pid:
            forks.append(pid)
        return pid

    monkeypatch.setenv("SEGUE_INDEX_WORKER", "off")
    rebuild(layout)
    alone = _dump(layout)
    monkeypatch.setenv("SEGUE_INDEX_WORKER", "on")
    monkeypatch.setattr(os, "fork", counted)
    rebuild(layout)
    monkeypatch.setattr(os, "fork", fork)
    assert len(forks) == 1, "the rebuild did not fork its worker"
    return alone, _dump(layout)


def test_the_load_rule_counts_the_asking_process_itself_where_it_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two CPUs and a load average of 1.6: a foreground rebuild forks no worker (about one
    CPU is not idle), the background builder's child, itself most of that load
    (``OWN_LOAD`` 1), does."""
    monkeypatch.delenv("SEGUE_INDEX_WORKER", raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1}, raising=False)
    monkeypatch.setattr(os, "getloadavg", lambda: (1.6, 1.0, 1.0))
    assert not index_build_worker.wanted(64 << 20)
    monkeypatch.setattr(index_build_worker, "OWN_LOAD", 1.0)
    assert index_build_worker.wanted(64 << 20)
    monkeypatch.setattr(os, "getloadavg", lambda: (2.4, 1.0, 1.0))  # busy beside it
    assert not index_build_worker.wanted(64 << 20)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    history=st.lists(ops, min_size=1, max_size=60),
    split=st.integers(0, 60),
    size=st.integers(1, 5),
    torn=st.booleans(),
)
def test_the_worker_makes_the_same_index(
    monkeypatch: pytest.MonkeyPatch, history: list[Any], split: int, size: int, torn: bool
) -> None:
    monkeypatch.setattr(index_build_worker, "BATCH", size)
    with tempfile.TemporaryDirectory() as tmp:
        layout = Layout(Path(tmp), "ws")
        lines = lines_of(history)
        cut = min(split, len(lines))
        write_history(layout, lines[:cut], lines[cut:])
        if torn and cut < len(lines):
            with layout.chat.open("ab") as f:
                f.write(b'{"id":"torn","role":"user","parts":[{"type":"text","text":"needle')
            stamp_receipt(layout)
        alone, forked = _both(layout, monkeypatch)
        assert alone["rows"], "nothing was indexed"
        assert forked == alone


def _history(layout: Layout, n: int = 400) -> None:
    history = [
        f'{{"id":"i{i}","role":"user","metadata":{{"historySequence":{i}}},"parts":'
        f'[{{"type":"text","text":"needle {i} parse_config(path) line {i % 7}"}}]}}'.encode()
        for i in range(n)
    ]
    write_history(layout, history[: n // 2], history[n // 2 :])


def test_a_worker_that_dies_puts_no_index_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    layout = Layout(tmp_path, "ws")
    _history(layout)
    monkeypatch.setenv("SEGUE_INDEX_WORKER", "on")
    monkeypatch.setattr(index_build_worker, "BATCH", 10)
    real = index_build_split._worker_batches

    def dying(segs: Any, chat_start: int) -> Iterator[Any]:
        for n, batch in enumerate(real(segs, chat_start)):
            if n == 3:
                os.kill(os.getpid(), signal.SIGKILL)  # in the worker: the fork's own pid
            yield batch

    monkeypatch.setattr(index_build_split, "_worker_batches", dying)
    with pytest.raises(NotBuilt, match="worker"):
        rebuild(layout)
    assert not index_path(layout).exists()
    assert not build_path(layout).exists()
    monkeypatch.setattr(index_build_split, "_worker_batches", real)
    rebuild(layout)  # and the next rebuild builds it
    assert index_path(layout).exists()


def test_what_the_worker_meets_is_raised_in_the_rebuild(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    layout = Layout(tmp_path, "ws")
    _history(layout)
    monkeypatch.setenv("SEGUE_INDEX_WORKER", "on")

    def moved(segs: Any, chat_start: int) -> Iterator[Any]:
        raise HistoryMoved("the files moved")
        yield  # a generator, as the real one

    monkeypatch.setattr(index_build_split, "_worker_batches", moved)
    with pytest.raises(NotBuilt, match="rewritten while it was indexed"):
        rebuild(layout)
    assert not index_path(layout).exists()


_KILLED_WRITER = r"""
import os, sys, time
from pathlib import Path
from segue._retrieval import index_build_split, index_build_worker
from segue._retrieval.index_build import rebuild
from segue._workspace import Layout
index_build_worker.BATCH = 10
real = index_build_split._worker_batches
def slow(segs, chat_start):
    Path(sys.argv[2]).write_text(str(os.getpid()))
    for batch in real(segs, chat_start):
        time.sleep(0.01)
        yield batch
index_build_split._worker_batches = slow
rebuild(Layout(Path(sys.argv[1]), "ws"))
"""


def _gone(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return any(
        line.split()[1] in ("Z", "X") for line in status.splitlines() if line.startswith("State:")
    )


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc")
def test_the_worker_ends_when_the_rebuild_is_killed(tmp_path: Path) -> None:
    layout = Layout(tmp_path, "ws")
    _history(layout, 2000)
    pidfile = tmp_path / "worker.pid"
    env = {**os.environ, "SEGUE_INDEX_WORKER": "on", "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_WRITER, str(tmp_path), str(pidfile)],
                            cwd=ROOT, env=env)  # fmt: skip
    deadline = time.monotonic() + 120
    while not (pidfile.exists() and pidfile.read_text()):
        assert proc.poll() is None, "the rebuild ended before its worker started"
        assert time.monotonic() < deadline, "the worker never started"
        time.sleep(0.01)
    worker = int(pidfile.read_text())
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    while not _gone(worker):  # its next write finds the pipe closed
        assert time.monotonic() < deadline, "the worker outlived the rebuild"
        time.sleep(0.01)
    assert not index_path(layout).exists()


def test_windows_opened_by_escaped_keys_are_followed_in_the_other_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A boundary whose key is spelled with a JSON escape, in a batch the other process
    makes: the rows after it are still in its window."""
    monkeypatch.setattr(index_build_worker, "BATCH", 1)
    text = (
        '{{"id":"t{0}","role":"user","metadata":{{"historySequence":{0}}},'
        '"parts":[{{"type":"text","text":"row {0}"}}]}}'
    )
    compaction = (
        b'{"id":"c3","role":"assistant","metadata":{"compaction\\u0042oundary":true,'
        b'"compacted":true,"compactionEpoch":1,"historySequence":3},'
        b'"parts":[{"type":"text","text":"summary"}]}'
    )
    reset = (
        b'{"id":"r6","role":"user","metadata":{"context\\u0042oundaryKind":"reset",'
        b'"historySequence":6},"parts":[]}'
    )
    lines = [text.format(i).encode() for i in range(10)]
    lines[3], lines[6] = compaction, reset
    for at in range(4):  # the boundaries in each process's batches
        write_history(Layout(tmp_path / str(at), "ws"), [], [b"x"] * at + lines)
        alone, forked = _both(Layout(tmp_path / str(at), "ws"), monkeypatch)
        windows = {row[4] for row in alone["rows"]}
        assert len(windows) == 3, windows  # the root, the compaction's, the reset's
        assert forked == alone


def _megabytes(count: int | None, pidfile: Path) -> Iterator[bytes]:
    """``count`` (or endless) items of 1 MiB each, each distinct; the worker's pid in
    ``pidfile`` once it has made them all."""
    n = 0
    while count is None or n < count:
        yield bytes([n % 251]) * (1 << 20)
        n += 1
    pidfile.write_text(str(os.getpid()))


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc")
def test_the_worker_runs_ahead_of_a_busy_writer(tmp_path: Path) -> None:
    """The worker makes many times what a pipe holds and exits while the writer has read
    nothing yet: the writer's side reads the pipe ahead, so neither waits on the other
    (without it the worker stops at the pipe's 1 MiB until the writer reads)."""
    import threading

    pidfile = tmp_path / "worker.pid"
    threads = threading.active_count()
    with index_build_worker.Worker(lambda: _megabytes(16, pidfile)) as worker:
        deadline = time.monotonic() + 60
        while not (pidfile.exists() and pidfile.read_text() and _gone(int(pidfile.read_text()))):
            assert time.monotonic() < deadline, "the worker waited for the writer to read"
            time.sleep(0.01)
        got = list(worker.batches())
    assert [item[:1] for item in got] == [bytes([n]) for n in range(16)]
    assert all(len(item) == 1 << 20 for item in got)
    assert threading.active_count() == threads  # the read-ahead ended with the block


_LEFT_EARLY = r"""
import sys
from pathlib import Path
from segue._retrieval import index_build_worker
from tests.index.test_rebuild_worker import _megabytes
with index_build_worker.Worker(lambda: _megabytes(None, Path(sys.argv[1]))) as worker:
    for n, item in enumerate(worker.batches()):
        if n == 3:
            break
print("left")
"""


def test_a_writer_that_leaves_early_does_not_wait_for_the_worker(tmp_path: Path) -> None:
    """A writer that stops taking batches before the end (no exception) ends the worker,
    which would otherwise make its endless batches for ever."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-c", _LEFT_EARLY, str(tmp_path / "pid")],
        check=False, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == "left\n"
