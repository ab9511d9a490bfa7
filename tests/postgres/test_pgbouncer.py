"""The PostgreSQL store behind a real PgBouncer in transaction mode (tests/postgres/
bouncer.py: fewer server connections than clients, handed out per transaction), with many
stores of one process sharing one psycopg pool: no session state may cross a transaction
(prepared statements, session locks, SET), or these fail."""

from __future__ import annotations

import threading
import time
from urllib.parse import urlsplit

import psycopg

from segue._messages import Row, make_row
from segue.postgres._schema import connect, ensure_schema
from segue.postgres._store import PostgresStore, shared_pool
from tests.postgres.bouncer import Bouncer, bouncer
from tests.postgres.cluster import Cluster

__all__ = ["bouncer"]

PATIENCE = 60.0


def batch(tag: str, n: int = 3) -> list[Row]:
    return [make_row("user", f"{tag} row {k}", id=f"{tag}-{k}") for k in range(n)]


def behind(bouncer: Bouncer, pg_url: str) -> str:
    # the schema is created on the server itself (`segue store init` does it): a migration
    # holds a session lock; once the schema is current a store opens with one plain query
    conn = connect(pg_url)
    ensure_schema(conn)
    conn.close()
    return bouncer.url(urlsplit(pg_url).path.lstrip("/"))


def test_many_stores_share_a_pool_through_pgbouncer(bouncer: Bouncer, pg_url: str) -> None:
    url = behind(bouncer, pg_url)
    pool = shared_pool(url, max_size=4)
    errors: list[BaseException] = []

    def agent(n: int) -> None:
        try:
            own = PostgresStore(url, f"agent-{n}", pool=pool)
            shared = PostgresStore(url, "shared", pool=pool)
            for b in range(8):
                own.append(batch(f"a{n}-{b}"))
                shared.append(batch(f"s{n}-{b}", 1))
                assert own.next_sequence() == 3 * (b + 1)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=agent, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=PATIENCE * 4)
    assert not errors, errors
    for n in range(8):
        store = PostgresStore(url, f"agent-{n}", pool=pool)
        rows = list(store.rows())
        assert [r.id for r in rows] == [f"a{n}-{b}-{k}" for b in range(8) for k in range(3)]
        assert [r.sequence for r in rows] == list(range(24))
        assert store.verify().ok
    shared_rows = list(PostgresStore(url, "shared", pool=pool).rows())
    assert len(shared_rows) == 64
    assert [r.sequence for r in shared_rows] == list(range(64))
    for n in range(8):  # each agent's batches in its own order
        mine = [r.id for r in shared_rows if r.id.startswith(f"s{n}-")]
        assert mine == [f"s{n}-{b}-0" for b in range(8)]
    # more clients than server connections: PgBouncer really was handing them around
    with psycopg.connect(pg_url) as conn:
        servers = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND pid <> pg_backend_pid()"
        ).fetchone()
    assert servers is not None and servers[0] <= 4


def test_the_workspace_lock_holds_through_pgbouncer(
    bouncer: Bouncer, pg_url: str, pg_cluster: Cluster
) -> None:
    url = behind(bouncer, pg_url)
    holder = PostgresStore(url, "locked-ws", pool=shared_pool(url, max_size=4))
    other = PostgresStore(url, "locked-ws")  # its own connection, through PgBouncer too
    done = threading.Event()
    failed: list[BaseException] = []

    def wait_and_append() -> None:
        try:
            other.append(batch("other", 1))
        except BaseException as exc:
            failed.append(exc)
        finally:
            done.set()

    with holder.locked():
        holder.append(batch("first", 1))  # inside its own lock: no self-deadlock
        thread = threading.Thread(target=wait_and_append)
        thread.start()
        deadline = time.monotonic() + PATIENCE
        with psycopg.connect(pg_url) as conn:
            while True:  # the other client waits on the advisory lock, on the server
                waiting = conn.execute(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
                ).fetchone()
                if waiting is not None and waiting[0] >= 1:
                    break
                assert not done.is_set(), f"the append did not wait for the lock: {failed}"
                assert time.monotonic() < deadline, "the other append never reached the lock"
                time.sleep(0.01)
        holder.append(batch("second", 1))
        assert not done.is_set()
    thread.join(timeout=PATIENCE)
    assert not failed, failed
    assert [r.id for r in holder.rows()] == ["first-0", "second-0", "other-0"]
    other.close()
    holder.close()


def test_session_history_through_pgbouncer(bouncer: Bouncer, pg_url: str) -> None:
    """A look-back call's transaction (its pipelined BEGIN, ROLLBACK) through PgBouncer in
    transaction mode, from many threads on one small pool while another client appends:
    every answer is whole and right."""
    from segue.postgres._history_tool import PgSessionHistoryTool

    url = behind(bouncer, pg_url)
    pool = shared_pool(url, max_size=3)
    writer = PostgresStore(url, "looked-back", pool=pool)
    writer.append([*batch("before", 30), make_row("user", "the zebracorn-4471 key", id="fact")])
    errors: list[BaseException] = []
    calls = (
        {"action": "search", "match": "literal", "query": "zebracorn-4471"},
        {"action": "search", "query": "zebracorn"},
        {"action": "search", "match": "literal", "query": "row"},
    )

    def reader() -> None:
        try:
            tool = PgSessionHistoryTool(PostgresStore(url, "looked-back", pool=pool))
            for _ in range(10):
                for call in calls:
                    got = tool.call(call)
                    assert got["ok"], got
                    assert got["items"], got
                    if "zebracorn" in str(call["query"]):
                        assert got["items"][0]["text"] == "the zebracorn-4471 key"
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=reader) for _ in range(6)]
    for t in threads:
        t.start()
    for b in range(10):
        writer.append(batch(f"during-{b}", 2))
    for t in threads:
        t.join(timeout=PATIENCE * 4)
    assert not errors, errors
