"""An append planned from the state a store's own last commit left (one INSERT, a guarded
update) must never write over what another client did meanwhile: two stores taking turns on
one workspace, a rewrite by another client, and a hard clear all leave every batch whole,
in order, with strictly increasing sequences (R28), and the history as the JSONL store
would hold it (verify passes)."""

from __future__ import annotations

import psycopg
import pytest

from segue._errors import StoreError
from segue._messages import Row, make_row
from segue.postgres._store import PostgresStore

WS = "turns"


def batch(tag: str, n: int) -> list[Row]:
    return [
        make_row("user", f"{tag} row {k} " + "x" * (k * 50), id=f"{tag}-{k}") for k in range(n)
    ]


def test_two_stores_taking_turns_on_one_workspace(pg_url: str) -> None:
    a, b = PostgresStore(pg_url, WS), PostgresStore(pg_url, WS)
    try:
        for i in range(6):
            (a if i % 2 == 0 else b).append(batch(f"t{i}", 3))
            a.append(batch(f"a{i}", 1))  # a's second append in a row: its own state holds
        rows = list(a.rows())
        assert [r.id for r in rows] == [
            rid for i in range(6) for rid in (*[f"t{i}-{k}" for k in range(3)], f"a{i}-0")
        ]
        seqs = [r.sequence if r.sequence is not None else -1 for r in rows]
        assert seqs == sorted(set(seqs)) and len(seqs) == 24 and min(seqs) == 0
        assert a.verify().ok and b.verify().ok
        assert a.next_sequence() == 24
    finally:
        a.close()
        b.close()


def test_a_rewrite_or_clear_by_another_client_is_not_overwritten(pg_url: str) -> None:
    a, other = PostgresStore(pg_url, WS), PostgresStore(pg_url, WS)
    try:
        a.append(batch("one", 3))
        epoch = a.epoch()
        other.quarantine("1")  # a new epoch and new offsets, written by someone else
        assert a.epoch() != epoch
        a.append(batch("two", 2))
        report = a.verify()
        assert report.ok, report.problems
        assert a.epoch() != epoch  # the append kept the rewrite's epoch, not its own old one
        other.clear_all()
        a.append(batch("three", 1))
        rows = list(a.rows())
        assert [r.id for r in rows] == ["three-0"]
        assert rows[0].sequence == 5  # a hard clear never lets a sequence be reused
        assert a.verify().ok
    finally:
        a.close()
        other.close()


def test_a_batch_is_whole_or_absent_on_either_path(pg_url: str) -> None:
    a = PostgresStore(pg_url, WS)
    try:
        a.append(batch("ok", 2))
        with psycopg.connect(pg_url, autocommit=True) as conn:
            # the next INSERT fails inside the transaction, after the guarded update
            conn.execute(
                "ALTER TABLE segue_rows ADD CONSTRAINT no_bad"
                " CHECK (body IS NULL OR body NOT LIKE 'bad row 1%')"
            )
        before = a.next_sequence()
        with pytest.raises(StoreError, match="no_bad"):
            a.append(batch("bad", 2))
        assert a.next_sequence() == before
        assert [r.id for r in a.rows()] == ["ok-0", "ok-1"]
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute("ALTER TABLE segue_rows DROP CONSTRAINT no_bad")
        a.append(batch("after", 1))
        assert [r.id for r in a.rows()] == ["ok-0", "ok-1", "after-0"]
        assert a.verify().ok
    finally:
        a.close()
