"""The literal search's vocabulary (``segue_lex``) holds every token of every committed row,
whichever path stored it: a store sends only the tokens it has not seen committed, so a
batch rolled back after the call must not count as sent. With a real server."""

from __future__ import annotations

from typing import Any

import pytest

from segue.messages import make_row
from segue.postgres.history_tool import PgSessionHistoryTool
from segue.postgres.store import PostgresStore

WS = "vocab"
LITERAL: dict[str, Any] = {"action": "search", "match": "literal"}


def _found(store: PostgresStore, query: str) -> list[str]:
    answer = PgSessionHistoryTool(store).call({**LITERAL, "query": query})
    assert answer["ok"], answer
    return [str(i) for i in answer["items"]]


def test_a_rolled_back_append_leaves_its_tokens_unsent(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with PostgresStore(pg_url, WS) as store, PostgresStore(pg_url, WS) as other:
        store.append([make_row("user", "first quuxplosion", id="one")])
        other.append([make_row("user", "meanwhile", id="two")])  # store's next call misses
        real = PostgresStore._call
        calls = {"n": 0}

        def failing(self: PostgresStore, *args: Any, **kwargs: Any) -> Any:
            got = real(self, *args, **kwargs)
            calls["n"] += 1
            if not kwargs.get("lock", True):  # inside _append_locked's transaction
                raise RuntimeError("the client dies before COMMIT")
            return got

        monkeypatch.setattr(PostgresStore, "_call", failing)
        row = make_row("user", "the flibbertigibbet token", id="three")
        with pytest.raises(RuntimeError):
            store.append([row])  # planned from a stale state: the locked path, rolled back
        assert calls["n"] >= 2
        monkeypatch.setattr(PostgresStore, "_call", real)
        assert _found(store, "ibbertigib") == []  # nothing of it was stored
        store.append([row])  # stored now: its tokens must reach the vocabulary
        for query in ("ibbertigib", "FLIBBERT", "bbet tok", "quuxplo"):
            assert len(_found(store, query)) == 1, query
        got = store._writer().execute(
            "SELECT count(*) FROM segue_lex WHERE workspace = %s AND term = 'flibbertigibbet'",
            (WS,),
        ).fetchone()
        assert got == (1,)


def test_every_append_path_fills_the_vocabulary(pg_url: str) -> None:
    with PostgresStore(pg_url, WS) as store:
        store.append([make_row("user", "small batch zorblaxian", id="s")])
        store.append([make_row("user", f"large batch {i} vexillologist", id=f"l{i}")
                      for i in range(70)])  # over PIPELINE_ROWS: COPY
        with store.locked():
            store.append([make_row("user", "held quintessentially", id="h")])
        for query in ("blaxia", "xillolog", "tessential"):
            assert _found(store, query), query
