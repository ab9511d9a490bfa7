"""The literal search's vocabulary (``segue_lex``) holds every token of every committed row,
whichever path stored it: a store sends only the tokens it has not seen committed, so a
batch rolled back after the call must not count as sent. With a real server."""

from __future__ import annotations

from typing import Any

import pytest

from segue._messages import make_row
from segue.postgres._history_tool import PgSessionHistoryTool
from segue.postgres._store import PostgresStore

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


def test_long_tokens_are_found_by_every_kind_of_piece(pg_url: str, tmp_path: Any) -> None:
    """A token longer than the vocabulary keeps whole (256 characters) is stored as windows:
    a whole-token, prefix, suffix or inside piece of it, short or longer than a window, and
    one across its ends, finds the row, with the JSONL store's index's answer wherever that
    index finds it (it misses a whole token longer than a window between separators, which
    the scan finds: so does PostgreSQL)."""
    from segue._history.store import HistoryStore
    from segue._retrieval.index_build import rebuild
    from segue._retrieval.tool import SessionHistoryTool
    from segue._workspace import Layout

    token = "".join(f"{i:03d}seg" for i in range(100))  # 600 characters, no separator
    rows = [make_row("user", f"before {token} after", id="long"),
            make_row("user", "a short row", id="short")]
    disk = HistoryStore(Layout(tmp_path / "jsonl", "longtok"), durable=False)
    with PostgresStore(pg_url, "longtok") as store:
        assert disk.append(rows) == store.append(rows)
        rebuild(disk.layout)
        pg, jsonl = PgSessionHistoryTool(store), SessionHistoryTool(disk.layout)
        queries = [token, token[:300], token[-300:], token[:40], token[-40:], token[100:250],
                   token[200:230], token[250:500], "before " + token[:20],
                   token[-20:] + " after", token[1:], "e " + token + " a"]
        for query in queries:
            got = pg.call({**LITERAL, "query": query})
            want = jsonl.call({**LITERAL, "query": query})
            assert got["ok"] and got["items"], query
            assert got["items"] == want["items"] or not want["items"], query



def test_a_row_of_many_wide_tokens_is_stored_and_found(pg_url: str) -> None:
    """Tokens of non-ASCII text take up to 4 bytes a character, and PostgreSQL bounds a
    ``tsvector`` in bytes: a row of about 1 MB of distinct wide tokens, under R24's 1 MiB
    line bound, is stored and found as the JSONL store finds it."""
    han = [chr(0x4E00 + i) for i in range(400)]
    words = [f"{a}{b}{c}" for a in han[:20] for b in han[20:120] for c in han[120:170]]
    text = "needleword " + " ".join(words)
    assert len(text) < 512 << 10 and len(text.encode()) > 10**6  # wide in bytes only
    with PostgresStore(pg_url, WS) as store:
        store.append([make_row("user", text, id="wide")])
        store.append([make_row("user", "a plain row", id="plain")])
        assert len(_found(store, "needleword")) == 1
        assert len(_found(store, words[777])) == 1
