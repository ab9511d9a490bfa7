"""The PostgreSQL store against the JSONL store, side by side in one process.

* Append latency: the same 3-row batches, durable on both sides (the JSONL store fsyncs; the
  server runs with ``fsync = on`` and a synchronous commit), with the CPU each append costs
  in the client and in the server; again in a database without the search (GIN) indexes,
  to show what maintaining them costs.
* ``history migrate`` both ways, MB/s, with and without the search indexes.
* Appends per second from 4 processes on one workspace (4 x N batches, wall time).
* ``history follow``: from an append's return to its line on a follower's output, on
  PostgreSQL (LISTEN/NOTIFY) and on JSONL (inotify).
* A fleet: 32 writer processes, one workspace each, on one server (batches/s together and
  the p99 of each append's latency), and 8 writers sharing one workspace (throughput); after
  each run every workspace is read back: no batch lost, each writer's batches in its order,
  ``historySequence`` strictly increasing; the CPU per batch in the writers and in the
  server, and the rate that CPU allows on this machine's cores; the 32 writers again
  without the search indexes. The writers are this module run as a script
  (``python -m bench.bench_postgres writer …``); they connect and append one warm-up
  batch first (not timed: what a long-lived writer pays once), then start together.
* ``segue history search`` of a rare word: the rows' literal tokens (GIN) and the
  vocabulary vs a scan of the JSONL transcript, at 20 MB of history (1 GB with
  ``SEGUE_BENCH_SCALE=large``).
* ``session_history`` search over the same history: the PostgreSQL store's tool (answered in
  SQL: the literal tokens' GIN index, filters, order and limits in the query) vs the JSONL
  tool with its history index (built before the runs, as an agent's calls leave it), for a rare word
  (the whole history above the floor is searched) and a common one (the first page).

Each figure is the median of at least 5 interleaved runs, with the min-max in the note; the
server's settings (fsync, synchronous_commit, shared_buffers, WAL) are printed with the rows.
The machine these figures come from is shared (2 cores, other work running): expect noise,
and more so in the fleet rows, where 32 processes share those cores with the server.
* A person's ``history search --words`` (a rare query and a common one) from the store's
  indexes vs the walk over every row it replaced, 30 MB of recorded agent rows (100 MB
  with ``SEGUE_BENCH_SCALE=large``); the listings must be the same.

``SEGUE_BENCH_PG_ROWS=append,migrate,follow,writers,fleet,search,words`` runs only those groups of
rows. The server: ``SEGUE_BENCH_PG_URL`` when set (a database the benchmark may write to), else a
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
from dataclasses import dataclass
from pathlib import Path

from bench.common import SCALE, Result
from segue._history.batch import encode_batch, stamp
from segue._history.store import HistoryStore
from segue._messages import Row, make_row
from segue._workspace import Layout

ROOT = Path(__file__).resolve().parents[1]
MB = 1 << 20
RUNS = 7


#: the data directory of the throwaway cluster (None: a server given by URL, elsewhere)
_DATA: list[Path] = []


def _proc_times(pid: int) -> tuple[int, list[int]]:
    with open(f"/proc/{pid}/stat") as f:
        text = f.read()
    fields = text[text.rindex(")") + 2:].split()
    return int(fields[1]), [int(x) for x in fields[11:15]]


def server_cpu() -> float | None:
    """CPU seconds the throwaway cluster's processes used so far (the postmaster, its
    children, and the children it reaped); None for a server elsewhere or without /proc."""
    if not _DATA:
        return None
    try:
        postmaster = int((_DATA[0] / "postmaster.pid").read_text().split()[0])
        total = sum(_proc_times(postmaster)[1])
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    parent, times = _proc_times(int(entry))
                except OSError:
                    continue
                if parent == postmaster:
                    total += times[0] + times[1]
    except (OSError, ValueError, IndexError):
        return None
    return total / os.sysconf("SC_CLK_TCK")


def _cpu_note(client: float, server: float | None, n: int, what: str = "batch") -> str:
    shown = f"client {client / n * 1e3:.2f} ms"
    if server is not None:
        shown += f", server {server / n * 1e3:.2f} ms"
    return f"CPU per {what}: {shown}"


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
    _DATA.append(cluster.data)
    return cluster.new_database()


def _other_database(url: str) -> str:
    """A fresh database on the same server (for the rows measured without the search
    indexes), its URL."""
    from urllib.parse import urlsplit, urlunsplit

    import psycopg

    name = "segue_bench_" + uuid.uuid4().hex[:8]
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return urlunsplit(urlsplit(url)._replace(path="/" + name))


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
    from segue._demo.trajectory import iter_packaged_rows

    rows = list(iter_packaged_rows(actions_as_tools=True))
    if not rows:
        raise RuntimeError("no packaged trajectories to build rows from")
    return rows


def _batch(rows: list[Row], i: int) -> list[Row]:
    return [rows[(i * 3 + k) % len(rows)] for k in range(3)]


def _append_latency(url: str, root: Path, rows: list[Row], *, label: str = "") -> Result:
    from segue.postgres._store import PostgresStore

    disk = HistoryStore(Layout(root / f"lat{len(label)}", "bench"))
    counter = itertools.count()
    spent = {"pg": 0.0, "disk": 0.0}

    def timed(key: str, fn: Callable[[], object]) -> Callable[[], object]:
        def run() -> object:
            start = time.process_time()
            try:
                return fn()
            finally:
                spent[key] += time.process_time() - start
        return run

    runs = max(RUNS, 31)
    with PostgresStore(url, "lat-" + uuid.uuid4().hex[:8]) as pg:
        pg.append(_batch(rows, 0))  # connect and create the schema outside the timing
        disk.append(_batch(rows, 0))
        before = server_cpu()
        t_pg, t_disk, note = _median_pair(
            timed("pg", lambda: pg.append(_batch(rows, next(counter)))),
            timed("disk", lambda: disk.append(_batch(rows, next(counter)))),
            runs=runs,
        )
        after = server_cpu()
    server = after - before if after is not None and before is not None else None
    return Result(
        name=f"postgres: durable append, 3 rows{label}",
        segue_seconds=t_pg,
        baseline="JSONL store durable append",
        baseline_seconds=t_disk,
        goal="<= 2x (both fsync'd: the commit is an fsync too)",
        note=(
            f"{note}; {_cpu_note(spent['pg'], server, runs, 'append')} "
            f"(JSONL: client {spent['disk'] / runs * 1e3:.2f} ms)"
        ),
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
    from segue._retrieval.index_build import rebuild
    from segue._retrieval.tool import SessionHistoryTool
    from segue._views.windows import search
    from segue.postgres import _search as pg_search
    from segue.postgres._history_tool import PgSessionHistoryTool
    from segue.postgres._store import PostgresStore

    size = 1024 * MB if SCALE == "large" else 20 * MB
    ws = "s-" + uuid.uuid4().hex[:8]
    layout = Layout(root / "search", ws)
    layout.session_dir.mkdir(parents=True)
    with open(layout.chat, "wb") as f:
        for data in _history(size, rows):
            f.write(data)
    HistoryStore(layout).recover()
    from segue.postgres._migrate import jsonl_to_postgres

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
            goal="<= 0.01x at 1 GB (literal tokens index)",
            note=note,
        ))
        tool = PgSessionHistoryTool(pg)
        rebuild(layout)
        disk_tool = SessionHistoryTool(layout)
        for query, what in (("zanzibarquux", "a rare word"), ("command", "a common word")):
            call = {"action": "search", "match": "literal", "query": query}  # R23: trigrams
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


#: a person's ``history search --words``: a query of rare words and one of common words
PEOPLE_WORDS_QUERIES = ("zebracorn answer", "error traceback")


def _people_words(url: str, root: Path) -> list[Result]:
    """A person's ``history search --words`` over the PostgreSQL store, answered from its
    indexes (``pwords``, ``plen``, ``words``), against the walk over every row it replaced,
    on 30 MB of recorded agent rows (100 MB with ``SEGUE_BENCH_SCALE=large``) with the fact
    in the middle: the two listings must be the same."""
    from bench.bench_index import _fact_in_the_middle, _size
    from segue._retrieval.people_words import words_search
    from segue.postgres._migrate import jsonl_to_postgres
    from segue.postgres._people_words import search_words
    from segue.postgres._store import PostgresStore

    size_mb = 100 if SCALE == "large" else 30
    ws = "pw-" + uuid.uuid4().hex[:8]
    layout = _fact_in_the_middle(root / "words", ws, size_mb)
    jsonl_to_postgres(layout, url)
    results: list[Result] = []
    with PostgresStore(url, ws) as pg:
        for query in PEOPLE_WORDS_QUERIES:

            def indexed(query: str = query) -> list[tuple[str, str, str, int]]:
                return [(h.item.item_id, h.item.window_id, h.snippet, h.matches)
                        for h in search_words(pg, query)]

            def walked(query: str = query) -> list[tuple[str, str, str, int]]:
                return [(h.item.item_id, h.item.window_id, h.snippet, h.matches)
                        for h in words_search(pg.entries, query)]

            listing = indexed()
            if not listing or listing != walked():  # something found, and compared
                raise RuntimeError(f"the listings of {query!r} differ (or are empty)")
            t_index, t_walk, note = _median_pair(indexed, walked, runs=5)
            results.append(Result(
                name=f"postgres: history search --words '{query}' @ "
                f"{_size(layout) // MB} MB",
                segue_seconds=t_index,
                baseline="the same walking every row",
                baseline_seconds=t_walk,
                goal="< 1x (SPEC.md §8: never a full-table scan in Python)",
                note=f"{len(listing)} items; {note}",
            ))
    return results


MIGRATE_RUNS = 5


def _drop_search_indexes(url: str) -> None:
    """The schema without its GIN (search) indexes: what a migration costs apart from them."""
    import psycopg

    from segue.postgres._schema import ensure_schema

    with psycopg.connect(url, autocommit=True) as conn:
        ensure_schema(conn)
        names = conn.execute(
            "SELECT i.relname FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid"
            " JOIN pg_am a ON a.oid = i.relam"
            " WHERE x.indrelid = 'segue_rows'::regclass AND a.amname = 'gin'"
        ).fetchall()
        for (name,) in names:
            conn.execute(f'DROP INDEX "{name}"')


def _migrate(url: str, root: Path, rows: list[Row], *, label: str = "") -> list[Result]:
    """``history migrate`` both ways, MB/s of transcript: JSONL -> PostgreSQL (COPY, the
    derivation of each chunk while the server stores the last, the read-back check) and
    PostgreSQL -> JSONL (one streamed COPY out, checked, written, fsync'd, read back)."""
    from segue.postgres._migrate import jsonl_to_postgres, postgres_to_jsonl

    size = 200 * MB if SCALE == "large" else 20 * MB
    src = root / f"migrate-src{label.replace(' ', '-')}"
    src.mkdir()
    data = src / "chat.jsonl"
    with open(data, "wb") as f:
        for chunk in _history(size, rows):
            f.write(chunk)
    total = data.stat().st_size / MB
    to_pg: list[float] = []
    to_jsonl: list[float] = []
    cpu_client: list[float] = []
    cpu_server: list[float] = []
    for _ in range(MIGRATE_RUNS):
        ws = "mig-" + uuid.uuid4().hex[:8]
        layout = Layout(root / "migrate", ws)
        layout.session_dir.mkdir(parents=True)
        shutil.copyfile(data, layout.chat)
        HistoryStore(layout).recover()
        start, client, server = time.perf_counter(), time.process_time(), server_cpu()
        jsonl_to_postgres(layout, url)
        to_pg.append(total / (time.perf_counter() - start))
        cpu_client.append((time.process_time() - client) / total)
        after = server_cpu()
        if server is not None and after is not None:
            cpu_server.append((after - server) / total)
        back = Layout(root / "migrate-back", ws)
        start = time.perf_counter()
        postgres_to_jsonl(url, back)
        to_jsonl.append(total / (time.perf_counter() - start))
        if back.chat.read_bytes() != layout.chat.read_bytes():
            raise RuntimeError("history migrate: the round trip is not byte-exact")
        shutil.rmtree(layout.session_dir)
        shutil.rmtree(back.session_dir)
    out = []
    cpu = f"CPU per MB: client {statistics.median(cpu_client):.2f} s"
    if cpu_server:
        both = statistics.median(cpu_client) + statistics.median(cpu_server)
        cpu += (f", server {statistics.median(cpu_server):.2f} s: at most {2 / both:.1f} MB/s"
                " on 2 cores doing nothing else")
    for name, rates in (("JSONL -> PostgreSQL", to_pg), ("PostgreSQL -> JSONL", to_jsonl)):
        out.append(Result(
            name=f"postgres: migrate {name}{label}, MB/s",
            segue_seconds=statistics.median(rates),
            baseline="target 30 MB/s",
            baseline_seconds=30.0,
            goal=">= 1x (the ratio is the rate over the target)",
            ratio_meaning="higher",
            unit="MB/s",
            note=(
                f"median of {MIGRATE_RUNS} runs of {total:.0f} MB, min-max "
                f"{min(rates):.1f}-{max(rates):.1f} MB/s; verified, round trip byte-exact"
                + (f"; {cpu}" if rates is to_pg else "")
            ),
        ))
    return out


#: fleet sizes: writers x batches each (small by default: the machine is shared)
FLEET_WRITERS = 32
SHARED_WRITERS = 8
FLEET_BATCHES = 100 if SCALE == "large" else 40
FLEET_RUNS = 5
_SETTINGS = (
    "fsync", "synchronous_commit", "full_page_writes", "shared_buffers", "wal_level",
    "wal_sync_method", "wal_buffers", "commit_delay", "max_wal_size", "max_connections",
    "default_toast_compression", "work_mem",
)


def server_settings(url: str) -> str:
    """The settings that decide what a durable append costs, as one line."""
    import psycopg

    with psycopg.connect(url) as conn:
        got = conn.execute(
            "SELECT name, setting, unit FROM pg_settings WHERE name = ANY(%s) ORDER BY name",
            (list(_SETTINGS),),
        ).fetchall()
        version = conn.execute("SHOW server_version").fetchone()
    shown = " ".join(f"{n}={v}{u or ''}" for n, v, u in got)
    return f"PostgreSQL {version[0] if version else '?'}: {shown}"


def _writer_main(argv: list[str]) -> int:
    """``writer URL WORKSPACE TAG BATCHES GO_FILE OUT_FILE``: connect, append one warm-up
    batch, say ready (OUT_FILE gets ``ready``), wait for GO_FILE, append BATCHES 3-row
    batches of realistic rows with ids ``TAG-<batch>-<k>``, then write each append's start
    and end (perf_counter) to OUT_FILE, and a last line ``cpu SECONDS``: the process's CPU
    time over the appends."""
    import msgspec

    from segue.postgres._store import PostgresStore

    url, workspace, tag, batches, go, out = argv
    rows = _rows()
    offset = sum(map(ord, tag))
    store = PostgresStore(url, workspace)
    # connected, the schema checked and one batch appended (ids ``warm-TAG-k``) before the
    # clock starts: a writer's first append pays once for what a long-lived agent pays once
    # in its life (the server session compiling the append function, cold caches)
    store.append([msgspec.structs.replace(r, id=f"warm-{tag}-{k}")
                  for k, r in enumerate(_batch(rows, offset))])
    Path(out).write_text("ready\n")
    while not os.path.exists(go):
        time.sleep(0.001)
    times: list[tuple[float, float]] = []
    cpu = time.process_time()
    for b in range(int(batches)):
        batch = [
            msgspec.structs.replace(r, id=f"{tag}-{b}-{k}")
            for k, r in enumerate(_batch(rows, b + offset))
        ]
        start = time.perf_counter()
        store.append(batch)
        times.append((start, time.perf_counter()))
    cpu = time.process_time() - cpu
    store.close()
    Path(out).write_text("".join(f"{a!r} {e!r}\n" for a, e in times) + f"cpu {cpu!r}\n")
    return 0


@dataclass
class FleetRun:
    wall: float  # seconds from the first append to the last
    latencies: list[float]  # every append's
    client_cpu: float  # the writers' CPU seconds over their appends
    server_cpu: float | None  # the server's CPU seconds from the start to the end


def _fleet_run(url: str, root: Path, workspaces: list[str], batches: int) -> FleetRun:
    """One run: a writer per entry of ``workspaces``. Raises when a batch is lost or out
    of order."""
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
    go = root / f"go-{uuid.uuid4().hex[:8]}"
    outs = [root / f"out-{go.name}-{i}" for i in range(len(workspaces))]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "bench.bench_postgres", "writer", url, ws, f"t{i}",
             str(batches), str(go), str(out)],
            cwd=ROOT, env=env,
        )
        for i, (ws, out) in enumerate(zip(workspaces, outs, strict=True))
    ]
    try:
        while not all(o.exists() and o.read_text().startswith("ready") for o in outs):
            if any(p.poll() not in (None, 0) for p in procs):
                raise RuntimeError("a fleet writer failed to start")
            time.sleep(0.01)
        before = server_cpu()
        go.touch()
        for p in procs:
            if p.wait() != 0:
                raise RuntimeError("a fleet writer failed")
        after = server_cpu()
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    texts = [o.read_text().splitlines() for o in outs]
    spans = [[tuple(map(float, line.split())) for line in lines[:-1]] for lines in texts]
    client = sum(float(lines[-1].split()[1]) for lines in texts)
    latencies = [end - start for times in spans for start, end in times]
    wall = max(t[-1][1] for t in spans) - min(t[0][0] for t in spans)
    _check_fleet(url, workspaces, batches)
    server = after - before if after is not None and before is not None else None
    return FleetRun(wall, latencies, client, server)


def _check_fleet(url: str, workspaces: list[str], batches: int) -> None:
    """Every writer's batches whole and in its order, sequences strictly increasing per
    workspace, nothing else there."""
    from segue.postgres._store import PostgresStore

    writers_of: dict[str, list[int]] = {}
    for i, ws in enumerate(workspaces):
        writers_of.setdefault(ws, []).append(i)
    for ws, writers in writers_of.items():
        with PostgresStore(url, ws) as store:
            rows = list(store.rows())
        seqs = [r.sequence for r in rows]
        if any(s is None for s in seqs) or any(
            b <= a for a, b in itertools.pairwise(s for s in seqs if s is not None)
        ):
            raise RuntimeError(f"{ws}: historySequence not strictly increasing")
        for i in writers:
            got = [r.id for r in rows if r.id.startswith(f"t{i}-")]
            want = [f"t{i}-{b}-{k}" for b in range(batches) for k in range(3)]
            if got != want:
                raise RuntimeError(f"{ws}: writer t{i} lost or reordered batches")
        expected = 3 * (batches + 1) * len(writers)  # with each writer's warm-up batch
        if len(rows) != expected:
            raise RuntimeError(f"{ws}: {len(rows)} rows, expected {expected}")


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


def _fleet(url: str, root: Path, *, label: str = "") -> list[Result]:
    """The fleet rows; with a ``label`` (another database) only the 32 writers' two rows."""
    total = FLEET_WRITERS * FLEET_BATCHES
    own_runs: list[FleetRun] = []
    shared_runs: list[FleetRun] = []
    for run in range(FLEET_RUNS):
        own = [f"fleet-{run}-{i}-{uuid.uuid4().hex[:6]}" for i in range(FLEET_WRITERS)]
        own_runs.append(_fleet_run(url, root, own, FLEET_BATCHES))
        if not label:
            shared = [f"shared-{run}-{uuid.uuid4().hex[:6]}"] * SHARED_WRITERS
            shared_runs.append(_fleet_run(url, root, shared, FLEET_BATCHES))
    rates = [total / r.wall for r in own_runs]
    p99s = [_p99(r.latencies) for r in own_runs]
    shared_rates = [SHARED_WRITERS * FLEET_BATCHES / r.wall for r in shared_runs]
    shared_p99s = [_p99(r.latencies) for r in shared_runs]

    def span(values: list[float], scale: float = 1.0, fmt: str = ".0f") -> str:
        return f"{min(values) * scale:{fmt}}-{max(values) * scale:{fmt}}"

    def cpu(runs: list[FleetRun], n: int) -> str:
        client = statistics.median(r.client_cpu for r in runs)
        servers = [r.server_cpu for r in runs if r.server_cpu is not None]
        server = statistics.median(servers) if servers else None
        note = _cpu_note(client, server, n)
        if server is not None:
            cores = os.cpu_count() or 1
            note += (f"; all {cores} cores doing nothing else would give at most "
                     f"{cores * n / (client + server):.0f} batches/s")
        return note

    checked = "every batch read back whole, in order, sequences strictly increasing"
    rows = [
        Result(
            name=f"postgres: {FLEET_WRITERS} writers, a workspace each{label}, batches/s",
            segue_seconds=statistics.median(rates),
            baseline="target 2,000 batches/s together",
            baseline_seconds=2000.0,
            goal=">= 1x (the ratio is the rate over the target)",
            ratio_meaning="higher",
            unit="batches/s",
            note=(
                f"median of {FLEET_RUNS} runs of {FLEET_WRITERS} x {FLEET_BATCHES} 3-row "
                f"batches, min-max {span(rates)} batches/s; {cpu(own_runs, total)}; {checked}"
            ),
        ),
        Result(
            name=f"postgres: {FLEET_WRITERS} writers{label}, p99 append latency",
            segue_seconds=statistics.median(p99s),
            baseline="target 50 ms",
            baseline_seconds=0.050,
            goal="<= 1x",
            note=f"median of {FLEET_RUNS} runs' p99, min-max {span(p99s, 1e3, '.1f')} ms",
        ),
    ]
    if label:
        return rows
    return [
        *rows,
        Result(
            name=f"postgres: {SHARED_WRITERS} writers on one workspace, batches/s",
            segue_seconds=statistics.median(shared_rates),
            baseline=f"{FLEET_WRITERS} writers on their own workspaces (row above)",
            baseline_seconds=statistics.median(rates),
            goal="printed (one workspace is serialised by its lock)",
            ratio_meaning="higher",
            unit="batches/s",
            note=(
                f"median of {FLEET_RUNS}, min-max {span(shared_rates)} batches/s, p99 "
                f"{statistics.median(shared_p99s) * 1e3:.1f} ms; "
                f"{cpu(shared_runs, SHARED_WRITERS * FLEET_BATCHES)}; {checked}"
            ),
        ),
    ]


def _follow_delays(args: list[str], append: Callable[[int], object], n: int) -> list[float]:
    """Seconds from each append's return to its item's line on a ``history follow --json``
    process's output (the follower reads the store again on every wake-up)."""
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "segue", *args, "history", "follow", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT,
    )
    assert proc.stdout is not None
    assert proc.stderr is not None
    try:
        while b"following workspace" not in proc.stderr.readline():
            if proc.poll() is not None:
                raise RuntimeError("history follow did not start")
        delays: list[float] = []
        for i in range(n):
            append(i)
            done = time.perf_counter()
            if f"follow-{i}".encode() not in proc.stdout.readline():
                raise RuntimeError("history follow printed something else")
            delays.append(time.perf_counter() - done)
        return delays
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()
        proc.stderr.close()


def _follow(url: str, root: Path) -> Result:
    from segue.postgres._store import PostgresStore

    n = 21
    ws = "follow-" + uuid.uuid4().hex[:8]
    home = root / "follow-home"
    disk = HistoryStore(Layout(home, ws))
    disk.append([make_row("user", "before", id="b")])
    with PostgresStore(url, ws) as pg:
        pg.append([make_row("user", "before", id="b")])

        def row(i: int) -> list[Row]:
            return [make_row("user", f"follow-{i} deploy log line {i}", id=f"f{i}")]

        t_pg = _follow_delays(["--store", url, "-w", ws], lambda i: pg.append(row(i)), n)
        t_disk = _follow_delays(
            ["--home", str(home), "-w", ws], lambda i: disk.append(row(i)), n
        )
    return Result(
        name="postgres: history follow, append to printed line",
        segue_seconds=statistics.median(t_pg),
        baseline="history follow on the JSONL store (inotify)",
        baseline_seconds=statistics.median(t_disk),
        goal="both <= 200 ms",
        note=(
            f"median of {n}; max {max(t_pg) * 1e3:.1f} ms vs {max(t_disk) * 1e3:.1f} ms, "
            f"min {min(t_pg) * 1e3:.1f} vs {min(t_disk) * 1e3:.1f} ms"
        ),
    )


def run() -> list[Result]:
    url = _server()
    if url is None:
        return []
    print(f"bench_postgres: {server_settings(url)}", file=sys.stderr)
    rows = _rows()
    root = Path(tempfile.mkdtemp(prefix="segue-bench-pg-"))
    bare = _other_database(url)
    _drop_search_indexes(bare)
    groups: dict[str, Callable[[], list[Result]]] = {
        "append": lambda: [
            _append_latency(url, root, rows),
            _append_latency(bare, root, rows, label=" (no search index)"),
        ],
        "migrate": lambda: [
            *_migrate(url, root, rows),
            *_migrate(bare, root, rows, label=" (no search index)"),
        ],
        "follow": lambda: [_follow(url, root)],
        "writers": lambda: [_four_writers(url, root)],
        "fleet": lambda: [*_fleet(url, root), *_fleet(bare, root, label=" (no search index)")],
        "search": lambda: _search(url, root, rows),
        "words": lambda: _people_words(url, root),
    }
    wanted = os.environ.get("SEGUE_BENCH_PG_ROWS", "").split(",")
    wanted = [w for w in (x.strip() for x in wanted) if w] or list(groups)
    unknown = [w for w in wanted if w not in groups]
    if unknown:
        raise SystemExit(f"SEGUE_BENCH_PG_ROWS: unknown group(s) {', '.join(unknown)}; "
                         f"known: {', '.join(groups)}")
    try:
        return [r for w in wanted for r in groups[w]()]
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["writer"]:
        sys.exit(_writer_main(sys.argv[2:]))
    sys.exit("usage: python -m bench.bench_postgres writer URL WORKSPACE TAG BATCHES GO OUT")
