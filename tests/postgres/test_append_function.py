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
from segue._messages import Row, encode_row, make_row
from segue.postgres import _store as postgres
from segue.postgres._append_call import row_type
from segue.postgres._binary import records
from segue.postgres._bulk import COLUMN_TYPES, COPY_COLUMNS, row_values
from segue.postgres._rows import prepare
from segue.postgres._schema import SCHEMA_VERSION, connect, ensure_schema
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


def _corpus() -> list[bytes]:
    from tests.index.test_schema_version import ARCHIVE, CHAT

    wide = make_row("user", "straße ﬁle Ⅻ 𝔘nicode KELVIN x" * 3 + "y" * 3000, id="wide")
    return [*ARCHIVE, *CHAT, encode_row(wide)]


def test_binary_rows_store_what_their_text_spells(pg_url: str) -> None:
    """The rows go to the server as binary records with binary ``tsvector`` values: every
    stored column equals the value its text spelling gives (the one a COPY in text sends),
    for every kind of line of the index's corpus, wide and non-ASCII tokens included."""
    raws = _corpus()
    conn = connect(pg_url)
    ensure_schema(conn)
    conn.execute("INSERT INTO segue_workspaces (workspace, epoch) VALUES ('bin', 'e')")
    prepared, _, _ = prepare(raws, pos=0, off=0, window_id="w:0")
    kind = row_type(conn)
    conn.execute("INSERT INTO segue_rows SELECT * FROM unnest(%b::segue_rows[])",
                 (records(kind, [row_values("bin", p) for p in prepared]),))
    for p in prepared:
        want = row_values("bin", p)
        same = " AND ".join(f"{c} IS NOT DISTINCT FROM %s::{COLUMN_TYPES[c]}"
                            for c in COPY_COLUMNS)
        got = conn.execute(
            f"SELECT {same} FROM segue_rows WHERE workspace = 'bin' AND pos = %s",
            (*want, p.pos),
        ).fetchone()
        assert got == (True,), p.raw[:80]
    words = conn.execute(
        "SELECT count(*) FROM segue_rows WHERE workspace = 'bin' AND words IS NOT NULL"
        " AND length(words) > 0 AND length(lit) > 0").fetchone()
    assert words is not None and words[0] > 5  # the corpus does have words and tokens
    conn.close()


def test_a_schema_5_store_gets_the_binary_append(pg_url: str) -> None:
    """A store as schema version 5 left it (``segue_append`` taking the rows as JSON) is
    upgraded on first open: the function is made again, and appends go on where they
    were."""
    with PostgresStore(pg_url, WS) as store:
        store.append(batch("old"))
        conn = store._writer()
        conn.execute("DROP FUNCTION segue_append")
        conn.execute("CREATE FUNCTION segue_append(ws text, batch json) RETURNS void"
                     " LANGUAGE sql AS ''")
        conn.execute("DELETE FROM segue_schema WHERE version >= 6")
    with PostgresStore(pg_url, WS) as again:
        again.append(batch("new"))
        again.append(batch("newer"))
        got = again._writer().execute("SELECT max(version) FROM segue_schema").fetchone()
        assert got == (SCHEMA_VERSION,) and SCHEMA_VERSION >= 6
        args = again._writer().execute(
            "SELECT pg_get_function_arguments('segue_append'::regproc)").fetchone()
        assert args is not None and "segue_rows[]" in args[0]
        rows = list(again.rows())
        assert [r.id for r in rows] == [f"{t}-{k}" for t in ("old", "new", "newer")
                                        for k in range(3)]
        assert [r.sequence for r in rows] == list(range(9))
        assert again.verify().ok
