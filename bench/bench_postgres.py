"""The PostgreSQL store against the JSONL store, side by side in one process.

* Append latency: the same 3-row batches, durable on both sides (the JSONL store fsyncs; the
  server runs with ``fsync = on`` and a synchronous commit).
* Appends per second from 4 processes on one workspace (4 x N batches, wall time).
* ``segue history search`` of a rare word: the ``pg_trgm`` index vs a scan of the JSONL
  transcript, at 20 MB of history (1 GB with ``SEGUE_BENCH_SCALE=large``).
* ``session_history`` search over the same history: the PostgreSQL store's tool (answered in
  SQL: the ``pg_trgm`` index, filters, order and limits in the query) vs the JSONL tool with
  its history index (built before the runs, as an agent's calls leave it), for a rare word
  (the whole history above the floor is searched) and a common one (the first page).

Each figure is the median of at least 5 interleaved runs, with the min-max in the note.
The server: ``SEGUE_BENCH_PG_URL`` when set (a database the benchmark may write to), else a
throwaway cluster started with the test suite's helper (initdb under /tmp, fsync on). Without
PostgreSQL binaries or psycopg, the rows are skipped with a message.
"""

from __future__ import annotations

import functools
import itertools
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

from bench.common import SCALE, Result
from segue.history.batch import encode_batch, stamp
from segue.history.store import HistoryStore
from segue.messages import Row, make_row
from segue.workspace import Layout

ROOT = Path(__file__).resolve().parents[1]
MB = 1 << 20
RUNS = 7


def _server() -> str | None:
    url = os.environ.get("SEGUE_BENCH_PG_URL")
    if url:
        return url
    try:
        import psycopg  # noqa: F401
        from tests.postgres.cluster import start_cluster
    except ImportError as exc:
        print(f"bench_postgres: skipped ({exc})", file=sys.stderr)
        return None
    try:
        cluster = start_cluster(fsync=True)
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        print(f"bench_postgres: skipped, no PostgreSQL server ({exc})", file=sys.stderr)
        return None
    return cluster.new_database()


def _median_pair(a: Callable[[], object], b: Callable[[], object], runs: int) -> tuple[
    float, float, str
]:
    ta: list[float] = []
    tb: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        a()
        ta.append(time.perf_counter() - start)
        start = time.perf_counter()
        b()
        tb.append(time.perf_counter() - start)
    note = (
        f"median of {runs}; min-max {min(ta) * 1e3:.2f}-{max(ta) * 1e3:.2f} ms vs "
        f"{min(tb) * 1e3:.2f}-{max(tb) * 1e3:.2f} ms"
    )
    return statistics.median(ta), statistics.median(tb), note


def _rows() -> list[Row]:
    from segue.demo.trajectory import iter_packaged_rows

    rows = list(iter_packaged_rows(actions_as_tools=True))
    if not rows:
        raise RuntimeError("no packaged trajectories to build rows from")
    return rows


def _batch(rows: list[Row], i: int) -> list[Row]:
    return [rows[(i * 3 + k) % len(rows)] for k in range(3)]


def _append_latency(url: str, root: Path, rows: list[Row]) -> Result:
    from segue.history.postgres import PostgresStore

    disk = HistoryStore(Layout(root / "lat", "bench"))
    counter = itertools.count()
    with PostgresStore(url, "lat-" + uuid.uuid4().hex[:8]) as pg:
        pg.append(_batch(rows, 0))  # connect and create the schema outside the timing
        disk.append(_batch(rows, 0))
        t_pg, t_disk, note = _median_pair(
            lambda: pg.append(_batch(rows, next(counter))),
            lambda: disk.append(_batch(rows, next(counter))),
            runs=max(RUNS, 31),
        )
    return Result(
        name="postgres: durable append, 3 rows",
        segue_seconds=t_pg,
        baseline="JSONL store durable append",
        baseline_seconds=t_disk,
        goal="<= 5x (a network round trip and a commit)",
        note=note,
    )


def _writers(cmd: Callable[[int], list[str]]) -> float:
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
    start = time.perf_counter()
    procs = [subprocess.Popen(cmd(i), cwd=ROOT, env=env) for i in range(4)]
    for p in procs:
        if p.wait() != 0:
            raise RuntimeError("a benchmark writer failed")
    return time.perf_counter() - start


def _four_writers(url: str, root: Path) -> Result:
    batches = 400 if SCALE == "large" else 100
    t_pg: list[float] = []
    t_disk: list[float] = []
    def pg_cmd(ws: str, run: int) -> Callable[[int], list[str]]:
        return lambda i: [
            sys.executable, "-m", "tests.postgres.pg_writer", url, ws, f"t{i}", str(batches),
            str(root / f"ack-{run}-{i}"),
        ]

    def disk_cmd(home: Path) -> Callable[[int], list[str]]:
        return lambda i: [
            sys.executable, "-m", "tests.history.writer", str(home), "bench", f"t{i}",
            str(batches), "0",
        ]

    for run in range(5):
        t_pg.append(_writers(pg_cmd("w4-" + uuid.uuid4().hex[:8], run)))
        t_disk.append(_writers(disk_cmd(root / f"w4-{run}")))
    total = 4 * batches
    pg_rate, disk_rate = total / statistics.median(t_pg), total / statistics.median(t_disk)
    return Result(
        name="postgres: appends/s from 4 processes",
        segue_seconds=statistics.median(t_pg),
        baseline="JSONL store, 4 processes, same batches",
        baseline_seconds=statistics.median(t_disk),
        goal="~1x or better (wall time for 4 x N batches)",
        note=(
            f"{pg_rate:.0f} vs {disk_rate:.0f} appends/s; median of 5, min-max "
            f"{min(t_pg):.2f}-{max(t_pg):.2f} s vs {min(t_disk):.2f}-{max(t_disk):.2f} s"
        ),
    )


def _history(size: int, rows: list[Row]) -> Iterator[bytes]:
    """Batches' bytes of about ``size`` bytes in all; one rare word in the middle."""
    total = 0
    for i in itertools.count():
        if total >= size:
            return
        batch = _batch(rows, i)
        if i == 1000:
            batch = [make_row("user", "the zanzibarquux setting", id="rare"), *batch[1:]]
        data, _ = encode_batch(stamp(batch, i * 3, "bench"))
        yield data
        total += len(data)


def _search(url: str, root: Path, rows: list[Row]) -> list[Result]:
    from segue.history import pg_search
    from segue.history.postgres import PostgresStore
    from segue.pgstore.history_tool import PgSessionHistoryTool
    from segue.retrieval.index_build import rebuild
    from segue.retrieval.tool import SessionHistoryTool
    from segue.views.windows import search

    size = 1024 * MB if SCALE == "large" else 20 * MB
    ws = "s-" + uuid.uuid4().hex[:8]
    layout = Layout(root / "search", ws)
    layout.session_dir.mkdir(parents=True)
    with open(layout.chat, "wb") as f:
        for data in _history(size, rows):
            f.write(data)
    HistoryStore(layout).recover()
    from segue.history.migrate import jsonl_to_postgres

    jsonl_to_postgres(layout, url)
    results: list[Result] = []
    with PostgresStore(url, ws) as pg:
        t_pg, t_disk, note = _median_pair(
            lambda: list(pg_search.search(pg, "zanzibarquux")),
            lambda: list(search(HistoryStore(layout).rows(), "zanzibarquux")),
            runs=5,
        )
        results.append(Result(
            name=f"postgres: history search @ {size // MB} MB",
            segue_seconds=t_pg,
            baseline="JSONL scan of the whole transcript",
            baseline_seconds=t_disk,
            goal="<= 0.01x at 1 GB (pg_trgm index)",
            note=note,
        ))
        tool = PgSessionHistoryTool(pg)
        rebuild(layout)
        disk_tool = SessionHistoryTool(layout)
        for query, what in (("zanzibarquux", "a rare word"), ("command", "a common word")):
            call = {"action": "search", "query": query}
            want = disk_tool.call(call)
            got = tool.call(call)
            same = [i["itemId"] for i in got.get("items", [])] == [
                i["itemId"] for i in want.get("items", [])
            ]
            if not (got["ok"] and want["ok"] and same):
                raise RuntimeError(f"session_history answers differ for {query!r}")
            t_pg, t_disk, note = _median_pair(
                functools.partial(tool.call, call), functools.partial(disk_tool.call, call),
                runs=RUNS,
            )
            results.append(Result(
                name=f"postgres: session_history search, {what} @ {size // MB} MB",
                segue_seconds=t_pg,
                baseline="JSONL session_history with its history index",
                baseline_seconds=t_disk,
                goal="~1x (both answer from a trigram index; PostgreSQL over a socket)",
                note=f"{len(got['items'])} items; {note}",
            ))
    return results


def run() -> list[Result]:
    url = _server()
    if url is None:
        return []
    rows = _rows()
    root = Path(tempfile.mkdtemp(prefix="segue-bench-pg-"))
    try:
        return [
            _append_latency(url, root, rows),
            _four_writers(url, root),
            *_search(url, root, rows),
        ]
    finally:
        shutil.rmtree(root, ignore_errors=True)
