"""``segue.open_history`` over PostgreSQL: the owner's and the model's views read the table,
and closing the history (or leaving its ``with`` block) gives its connections back."""

from __future__ import annotations

import time
from pathlib import Path

import segue
from segue._messages import make_row
from segue.postgres._store import PostgresStore


def _connections(url: str) -> int:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        got = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid()"
        ).fetchone()
    assert got is not None
    return int(got[0])


def _settles_at(url: str, expected: int) -> int:
    """The server ends a backend a moment after its client hangs up: poll (bounded) for it."""
    deadline = time.monotonic() + 10.0
    while (now := _connections(url)) != expected and time.monotonic() < deadline:
        time.sleep(0.02)
    return now


def test_a_closed_history_holds_no_connection(pg_url: str, tmp_path: Path) -> None:
    before = _connections(pg_url)  # before anything of segue's connects
    with PostgresStore(pg_url, "api") as store:
        store.append([make_row("user", "the zanzibarquux setting", id="u1"),
                      make_row("assistant", "noted", id="a1")])
    assert _settles_at(pg_url, before) == before
    with segue.open_history("api", home=tmp_path, store=pg_url) as history:
        assert [h.item_id for h in history.search("zanzibarquux")]
        model = history.as_model()
        assert model.search("zanzibarquux")["ok"] is True
        assert _connections(pg_url) > before  # it really reads over the server
    assert _settles_at(pg_url, before) == before
    history.close()  # idempotent
    assert _settles_at(pg_url, before) == before
