"""All-or-nothing across a killed client, a dropped connection and a restarted server, with
real processes, a real ``kill -9`` and ``pg_ctl restart -m immediate``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from segue._errors import StoreError
from segue._messages import make_row
from segue.postgres._history_tool import PgSessionHistoryTool
from segue.postgres._store import PostgresStore
from tests.conftest import scaled
from tests.history.helpers import check_batches_whole
from tests.postgres.cluster import Cluster

#: a literal search (R23), the default before words search (R39)
LITERAL: dict[str, Any] = {"action": "search", "match": "literal"}

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}


_STARTED: list[subprocess.Popen[bytes]] = []


@pytest.fixture(autouse=True)
def _reap() -> Iterator[None]:
    """No writer outlives its test, whatever the test's outcome."""
    yield
    while _STARTED:
        proc = _STARTED.pop()
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def writer(
    url: str, ws: str, tag: str, batches: int, ack: Path, *extra: str
) -> subprocess.Popen[bytes]:
    """A writer process; its stderr goes to ``<ack>.err``."""
    with open(ack.with_suffix(".err"), "ab") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.postgres.pg_writer", url, ws, tag, str(batches),
             str(ack), *extra],
            cwd=ROOT, env=ENV, stderr=err,
        )
    _STARTED.append(proc)
    return proc


def wait_for(check: object, what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.005)


def acked(path: Path) -> set[int]:
    if not path.exists():
        return set()
    return {int(line) for line in path.read_text().split()}


@pytest.mark.slow
def test_kill_9_inside_the_transaction_leaves_nothing(pg_url: str, tmp_path: Path) -> None:
    store = PostgresStore(pg_url, "ws")
    store.append([make_row("user", "before", id="before")])
    for i in range(scaled(12, 300)):
        pause = tmp_path / f"pause-{i}"
        proc = writer(pg_url, "ws", f"k{i}", 1, tmp_path / f"ack-{i}", str(pause))
        wait_for(pause.exists, "the writer to be inside its transaction")
        # the rows are in the table, uncommitted: no reader sees them
        assert [r.id for r in store.rows()] == ["before"] + [f"ok{j}" for j in range(i)]
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert not acked(tmp_path / f"ack-{i}")
        # the lock died with the client: the next append goes through at once
        got = store.append([make_row("user", f"ok{i}", id=f"ok{i}")])
        assert got[0].sequence == i + 1
    assert store.verify().ok
    store.close()


@pytest.mark.slow
def test_kill_9_at_random_instants(pg_url: str, tmp_path: Path) -> None:
    ack = tmp_path / "ack"
    for round_ in range(scaled(6, 100)):
        proc = writer(pg_url, "ws", f"r{round_}", 10_000, ack)
        start = len(acked(ack))
        want = start + round_ % 5
        wait_for(lambda w=want: len(acked(ack)) > w, "some acknowledged batches")
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    with PostgresStore(pg_url, "ws") as store:
        present = check_batches_whole(store.rows())
        assert store.verify().ok
    total = sum(len(v) for v in present.values())
    assert total >= len(acked(ack))  # acknowledged batches are all there (ids are per tag)
    for tag, batches in present.items():
        assert batches == set(range(len(batches))), tag  # a prefix per writer: none lost


@pytest.mark.slow
def test_server_restart_mid_appends(pg_cluster: Cluster, pg_url: str, tmp_path: Path) -> None:
    ack = tmp_path / "ack"
    batches = scaled(150, 1000)
    proc = writer(pg_url, "ws", "w", batches, ack)
    for n in (20, 60):
        wait_for(lambda n=n: len(acked(ack)) >= n, f"{n} acknowledged batches")
        pg_cluster.restart_immediate()
    proc.wait(timeout=300)
    err = ack.with_suffix(".err").read_text()
    assert proc.returncode == 0, err
    lines = err.splitlines()
    assert lines, "the writer must have met the restarts"
    assert all(line.startswith(("cannot append", "cannot connect")) for line in lines), lines
    with PostgresStore(pg_url, "ws") as store:
        present = check_batches_whole(store.rows())["w"]
        assert acked(ack) <= present  # nothing acknowledged was lost
        assert len(present) >= batches - len(lines)
        assert store.verify().ok
        # and the next append works
        assert store.append([make_row("user", "after", id="after")])[0].sequence is not None


def drop_connections(cluster: Cluster, url: str) -> None:
    """The server ends every session of the test's database (as a failover or a network
    cut would): each client finds its connection dead on next use."""
    import psycopg

    dbname = url.split("/")[3].split("?", maxsplit=1)[0]
    with psycopg.connect(cluster.url(), autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = %s AND pid <> pg_backend_pid()",
            (dbname,),
        )


def test_dropped_connection_mid_listing_is_an_error(pg_cluster: Cluster, pg_url: str) -> None:
    with PostgresStore(pg_url, "ws") as store:
        for b in range(4):
            store.append([make_row("user", f"r{b}-{i}", id=f"r{b}-{i}") for i in range(300)])
        lines = store.lines()
        next(lines)
        drop_connections(pg_cluster, pg_url)
        with pytest.raises(StoreError, match=r"lost the connection|cannot read"):
            for _ in lines:
                pass
        # the store reconnects on the next call
        assert len(list(store.rows())) == 1200


def test_dropped_connection_answers_history_changed_then_works(
    pg_cluster: Cluster, pg_url: str, tmp_path: Path
) -> None:
    with PostgresStore(pg_url, "ws") as store:
        store.append([make_row("user", f"needle {i}", id=f"n{i}") for i in range(40)])
        tool = PgSessionHistoryTool(store)
        first = tool.call({"action": "search", "match": "literal", "query": "needle", "limit": 5})
        assert first["ok"] is True
        floor = make_row("assistant", id="floor", metadata={"contextBoundaryKind": "reset"})
        store.append([floor])
        drop_connections(pg_cluster, pg_url)
        dropped = tool.call(
            {**LITERAL, "query": "needle", "limit": 5, "cursor": first["nextCursor"]}
        )
        assert dropped == {"ok": False, "error": dropped["error"]}
        assert dropped["error"]["code"] == "history_changed"
        again = tool.call(
            {**LITERAL, "query": "needle", "limit": 5, "cursor": first["nextCursor"]}
        )
        # the floor arrived with a rotation: the old cursor is stale, never rows below it
        assert again["ok"] is False and again["error"]["code"] == "stale_cursor"
        fresh = tool.call({"action": "search", "match": "literal", "query": "needle"})
        assert fresh["ok"] is True and fresh["items"] == []
