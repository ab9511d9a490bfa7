"""The one-statement append (``segue_append``, postgres/append_call.py): a store that knows
its workspace's state appends a batch in one statement and no transaction block of its
own; a miss (another client moved the workspace on) writes nothing, and the append then
holds the lock for its whole transaction; the lock and
its timeout hold as on every other path; the function's columns are the table's."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import pytest

from segue._errors import LockTimeout
from segue._messages import Row, make_row
from segue.postgres import _store as postgres
from segue.postgres._bulk import COLUMN_TYPES, COPY_COLUMNS
from segue.postgres._schema import connect, ensure_schema
from segue.postgres._store import PostgresStore

WS = "fn-ws"


def batch(tag: str, n: int = 3) -> list[Row]:
    return [make_row("user", f"{tag} row {k}: ran pytest, 2 failed", id=f"{tag}-{k}")
            for k in range(n)]


def test_the_functions_columns_are_the_tables(pg_url: str) -> None:
    conn = connect(pg_url)
    ensure_schema(conn)
    got = dict(conn.execute(
        "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute"
        " WHERE attrelid = 'segue_rows'::regclass AND attnum > 0 AND NOT attisdropped"
    ).fetchall())
    conn.close()
    assert set(COPY_COLUMNS) == set(got)  # every column is written, none is left NULL
    assert {c: COLUMN_TYPES[c] for c in COPY_COLUMNS} == got


@contextmanager
def statements(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, int]]:
    seen = {"execute": 0, "transaction": 0}
    real_execute = psycopg.Connection.execute
    real_transaction = psycopg.Connection.transaction

    def execute(self: Any, *a: Any, **k: Any) -> Any:
        seen["execute"] += 1
        return real_execute(self, *a, **k)

    def transaction(self: Any, *a: Any, **k: Any) -> Any:
        seen["transaction"] += 1
        return real_transaction(self, *a, **k)

    monkeypatch.setattr(psycopg.Connection, "execute", execute)
    monkeypatch.setattr(psycopg.Connection, "transaction", transaction)
    yield seen
    monkeypatch.undo()


def test_a_known_workspace_appends_in_one_statement(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with PostgresStore(pg_url, WS) as store:
        store.append(batch("first"))  # learns the state
        with statements(monkeypatch) as seen:
            for b in range(20):
                store.append(batch(f"b{b}"))
        assert seen == {"execute": 20, "transaction": 0}
        rows = list(store.rows())
        assert [r.id for r in rows][-3:] == ["b19-0", "b19-1", "b19-2"]
        assert [r.sequence for r in rows] == list(range(63))
        assert store.verify().ok


def test_a_miss_writes_nothing_and_then_holds_the_lock(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = PostgresStore(pg_url, WS), PostgresStore(pg_url, WS)
    try:
        a.append(batch("a0"))
        b.append(batch("b0"))  # a's state is stale now: its next call misses, then stores
        a.append(batch("a1"))
        b.append(batch("b1"))
        with statements(monkeypatch) as seen:
            a.append(batch("a2"))
        assert seen["transaction"] == 1  # it took the locked path
        monkeypatch.setattr(postgres, "_ATTEMPTS", 3)  # more tries: it plans again instead
        b.append(batch("b2"))
        with statements(monkeypatch) as seen:
            a.append(batch("a3"))
        assert seen == {"execute": 2, "transaction": 0}
        rows = list(a.rows())
        assert [r.id.split("-")[0] for r in rows[::3]] == [
            "a0", "b0", "a1", "b1", "a2", "b2", "a3"
        ]
        assert [r.sequence for r in rows] == list(range(21))
        assert a.verify().ok
    finally:
        a.close()
        b.close()


def test_threads_on_one_workspace_keep_every_batch_in_order(pg_url: str) -> None:
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        try:
            with PostgresStore(pg_url, WS) as store:
                for b in range(15):
                    store.append(batch(f"w{n}.{b}", 2))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    with PostgresStore(pg_url, WS) as store:
        rows = list(store.rows())
        assert store.verify().ok
    assert [r.sequence for r in rows] == list(range(6 * 15 * 2))
    for n in range(6):
        mine = [r.id for r in rows if r.id.startswith(f"w{n}.")]
        assert mine == [f"w{n}.{b}-{k}" for b in range(15) for k in range(2)]
    # each batch whole: its rows adjacent
    for first, second in itertools.pairwise(rows):
        if first.id.endswith("-0"):
            assert second.id == first.id[:-1] + "1"


def test_the_lock_and_its_timeout_hold_on_this_path(pg_url: str) -> None:
    holder = PostgresStore(pg_url, WS)
    other = PostgresStore(pg_url, WS, lock_timeout=0.2)
    try:
        holder.append(batch("h0"))
        other.append(batch("o0"))  # other knows the state: its next append is one call
        with holder.locked():
            holder.append(batch("inside"))  # the holder's own append skips the lock
            with pytest.raises(LockTimeout):
                other.append(batch("blocked"))
        other.append(batch("o1"))
        assert [r.id.split("-")[0] for r in other.rows()][::3] == ["h0", "o0", "inside", "o1"]
        assert other.verify().ok
    finally:
        holder.close()
        other.close()
