"""``session_history`` over PostgreSQL is answered in SQL: a literal search goes through the
rows' literal tokens (GIN) and the workspace's vocabulary, no trigram index; the agent's
columns are derived with each batch and filled in by the schema migration for rows stored
before it, rows derived by another version of segue are derived again, and a connection
dropped in the middle of a page answers ``history_changed``, never rows from below a floor.
With a real server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from segue._history.store import HistoryStore
from segue._messages import Row, make_row
from segue._retrieval.index_build import rebuild
from segue._retrieval.tool import SessionHistoryTool
from segue._workspace import Layout
from segue.postgres import _pages as sql_pages
from segue.postgres._derive import fingerprint
from segue.postgres._history_tool import PgSessionHistoryTool
from segue.postgres._schema import SCHEMA_VERSION
from segue.postgres._store import PostgresStore
from tests.postgres.cluster import Cluster
from tests.postgres.test_cli import ok, segue
from tests.postgres.test_crash import drop_connections
from tests.postgres.test_session_history import CALLS, history

#: a literal search (R23), the default before words search (R39)
LITERAL: dict[str, Any] = {"action": "search", "match": "literal"}

WS = "ws"


def _pages(tool: SessionHistoryTool | PgSessionHistoryTool,
           call: dict[str, Any]) -> Iterator[dict[str, Any]]:
    answer = tool.call(call)
    for _ in range(200):
        yield answer
        if not answer["ok"] or answer["nextCursor"] is None:
            return
        answer = tool.call({**call, "cursor": answer["nextCursor"]})
    raise AssertionError("paging did not end")


def _strip(answer: dict[str, Any]) -> dict[str, Any]:
    return {**answer, "nextCursor": answer.get("nextCursor") is not None}


def _same_as_jsonl(store: PostgresStore, jsonl: Layout) -> None:
    """Every call of test_session_history, page for page, as the JSONL store with its index."""
    rebuild(jsonl)
    ours = PgSessionHistoryTool(store, max_bytes=4096, max_rows=7)
    theirs = SessionHistoryTool(jsonl, max_bytes=4096, max_rows=7)
    for call in CALLS:
        got = [_strip(a) for a in _pages(ours, call)]
        want = [_strip(a) for a in _pages(theirs, call)]
        assert got == want, call


def _both(tmp_path: Path, url: str, batches: list[list[Row]]) -> tuple[PostgresStore, Layout]:
    disk = HistoryStore(Layout(tmp_path / "jsonl", WS), durable=False)
    store = PostgresStore(url, WS)
    for batch in batches:
        assert disk.append(batch) == store.append(batch)
    return store, disk.layout


def test_search_goes_through_the_literal_tokens_index(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # rows of about 1 KB: on a table this size the planner already prefers the index to
    # reading the table (on a few hundred short rows it may rightly read them instead)
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
    batches = [
        [make_row("user", f"{words[i % 8]} {words[(i * 3) % 8]} note {i} " * 30, id=f"u{i}")
         for i in range(b * 100, b * 100 + 100)]
        for b in range(30)
    ]
    batches[17][40] = make_row("assistant", "the zanzibarquux setting", id="rare")
    store, layout = _both(tmp_path, pg_url, batches)
    with store:
        store._writer().execute("ANALYZE segue_rows")
        plans: dict[str, list[str]] = {"lit @@": [], "words @@": []}
        real = sql_pages.Sql.query

        def explained(self: sql_pages.Sql, sql: str, args: Any) -> list[tuple[Any, ...]]:
            for marker, seen in plans.items():
                if marker in sql:
                    plan = self.conn.execute("EXPLAIN " + sql, args).fetchall()
                    seen.append("\n".join(str(r[0]) for r in plan))
            return real(self, sql, args)

        monkeypatch.setattr(sql_pages.Sql, "query", explained)
        tool = PgSessionHistoryTool(store)
        answer = tool.call({**LITERAL, "query": "ZANZIBARquux"})
        assert [i["itemId"] for i in answer["items"]] == ["1740"]
        assert answer["nextCursor"] is None
        # only the hit's row was read back: 3,000 rows were searched by the index
        assert answer["scanned"]["rows"] == 1
        # a piece inside a token, and one across a token's end, through the vocabulary
        for query in ("NZIBARqu", "barquux set", "e zanzibarq"):
            inside = tool.call({**LITERAL, "query": query})
            assert [i["itemId"] for i in inside["items"]] == ["1740"], query
            assert inside["scanned"]["rows"] == 1, query
        assert plans["lit @@"], plans
        assert all("segue_rows_lit" in p for p in plans["lit @@"]), plans
        indexes = store._writer().execute(
            "SELECT indexdef FROM pg_indexes WHERE tablename = 'segue_rows'").fetchall()
        assert indexes and not any("trgm" in str(r[0]) for r in indexes), indexes
        # a words search (R39) ranks from the words column's GIN index: one row read back
        ranked = tool.call({"action": "search", "query": "zanzibarquux settings"})
        assert [i["itemId"] for i in ranked["items"]] == ["1740"]
        assert ranked["scanned"]["rows"] == 1
        assert plans["words @@"], plans
        assert all("segue_rows_words" in p for p in plans["words @@"]), plans["words @@"]
        rebuild(layout)
        want = SessionHistoryTool(layout).call({**LITERAL, "query": "ZANZIBARquux"})
        assert answer == {**want, "nextCursor": None}


def test_schema_1_is_migrated_and_its_rows_filled_in(pg_url: str, tmp_path: Path) -> None:
    store, layout = _both(tmp_path, pg_url, history())
    conn = store._writer()
    # back to schema version 1 as an older segue left it: no agent columns at all
    conn.execute(
        "ALTER TABLE segue_rows DROP COLUMN kind, DROP COLUMN length, DROP COLUMN win,"
        " DROP COLUMN wid, DROP COLUMN wkind, DROP COLUMN aid, DROP COLUMN rid,"
        " DROP COLUMN role, DROP COLUMN ts, DROP COLUMN tools, DROP COLUMN abody,"
        " DROP COLUMN risky, DROP COLUMN words, DROP COLUMN wlen, DROP COLUMN mach,"
        " DROP COLUMN lit, DROP COLUMN longtok"
    )
    conn.execute("DROP TABLE segue_lex")
    conn.execute("ALTER TABLE segue_workspaces DROP COLUMN agent_win, DROP COLUMN derived")
    conn.execute("DROP FUNCTION segue_append")
    conn.execute("DELETE FROM segue_schema WHERE version >= 2")
    store.close()
    with PostgresStore(pg_url, WS) as again:  # first use migrates: 1 -> now, rows filled in
        assert again.epoch() != ""
        got = again._writer().execute("SELECT max(version) FROM segue_schema").fetchone()
        assert got == (SCHEMA_VERSION,)
        _same_as_jsonl(again, layout)


def test_schema_2_gets_the_words_columns_filled_in(pg_url: str, tmp_path: Path) -> None:
    store, layout = _both(tmp_path, pg_url, history())
    conn = store._writer()
    # back to schema version 2 as the previous segue left it: no words columns
    conn.execute("ALTER TABLE segue_rows DROP COLUMN words, DROP COLUMN wlen, DROP COLUMN mach")
    conn.execute("UPDATE segue_workspaces SET derived = 'segue-pg-derived/2'")
    conn.execute("DROP FUNCTION segue_append")
    conn.execute("DELETE FROM segue_schema WHERE version >= 3")
    store.close()
    with PostgresStore(pg_url, WS) as again:  # 2 -> now, in the migration
        assert again.epoch() != ""
        writer = again._writer()
        assert writer.execute("SELECT max(version) FROM segue_schema").fetchone() == (
            SCHEMA_VERSION,)
        assert writer.execute("SELECT derived FROM segue_workspaces").fetchone() == (
            fingerprint(),)
        filled = writer.execute(
            "SELECT count(*) FROM segue_rows WHERE kind = 0 AND words IS NULL AND NOT risky"
        ).fetchone()
        assert filled == (0,)
        reader = PgSessionHistoryTool(again, rederive=False)  # no derivation left to do
        found = reader.call({"action": "search", "query": "needles"})
        assert found["ok"] and found["items"], found
        _same_as_jsonl(again, layout)


def test_schema_4_is_upgraded_to_literal_tokens(pg_url: str, tmp_path: Path) -> None:
    """A store as schema version 4 left it (trigram indexes over both texts, no literal
    tokens, no vocabulary, the append function of its columns) is upgraded on first use:
    the trigram indexes go, every row gets its tokens, the vocabulary is filled, and every
    answer is the JSONL store's, before and after an append."""
    store, layout = _both(tmp_path, pg_url, history())
    conn = store._writer()
    conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    conn.execute("ALTER TABLE segue_rows DROP COLUMN lit, DROP COLUMN longtok")
    conn.execute("DROP TABLE segue_lex")
    conn.execute("DROP FUNCTION segue_grams")
    conn.execute("DROP FUNCTION segue_append")
    conn.execute("CREATE FUNCTION segue_append(ws text) RETURNS void LANGUAGE sql AS ''")
    conn.execute("CREATE INDEX segue_rows_body_trgm ON segue_rows USING gin (body gin_trgm_ops)")
    conn.execute("CREATE INDEX segue_rows_abody_trgm ON segue_rows"
                 " USING gin (abody gin_trgm_ops)")
    conn.execute("UPDATE segue_workspaces SET derived = 'segue-pg-derived/3'")
    conn.execute("DELETE FROM segue_schema WHERE version >= 5")
    store.close()
    with PostgresStore(pg_url, WS) as again:
        assert again.epoch() != ""
        writer = again._writer()
        assert writer.execute("SELECT max(version) FROM segue_schema").fetchone() == (
            SCHEMA_VERSION,)
        assert SCHEMA_VERSION >= 5
        trgm = writer.execute(
            "SELECT count(*) FROM pg_indexes WHERE indexdef LIKE '%gin_trgm_ops%'").fetchone()
        assert trgm == (0,)
        assert writer.execute(
            "SELECT count(*) FROM segue_rows WHERE lit IS NULL").fetchone() == (0,)
        terms = writer.execute("SELECT count(*) FROM segue_lex WHERE workspace = %s",
                               (WS,)).fetchone()
        assert terms is not None and terms[0] > 50
        reader = PgSessionHistoryTool(again, rederive=False)  # nothing left to derive
        for query in ("eedl", "NEEDLE yyy", "straß", "t the"):
            found = reader.call({**LITERAL, "query": query})
            assert found["ok"] and found["items"], (query, found)
        _same_as_jsonl(again, layout)
        late = [make_row("user", "a late zygomorphic remark", id="late")]
        disk = HistoryStore(layout, durable=False)
        assert disk.append(late) == again.append(late)
        found = reader.call({**LITERAL, "query": "GOMORPH"})
        assert len(found["items"]) == 1 and "zygomorphic" in str(found["items"][0]), found
        _same_as_jsonl(again, layout)


def test_rows_derived_by_other_code_are_derived_again(pg_url: str, tmp_path: Path) -> None:
    store, layout = _both(tmp_path, pg_url, history())
    with store:
        epoch = store.epoch()
        # what another version of segue might have computed: nothing is an item
        store._writer().execute("UPDATE segue_rows SET kind = 3")
        store._writer().execute("UPDATE segue_workspaces SET derived = 'other'")
        reader = PgSessionHistoryTool(store, rederive=False)
        refused = reader.call({"action": "list_windows"})
        assert refused["ok"] is False
        assert refused["error"]["code"] == "history_changed"
        assert "segue store init" in refused["error"]["message"]
        _same_as_jsonl(store, layout)  # a tool that may write derives them again first
        assert store.epoch() == epoch  # not a change of the history: cursors stay valid
        got = store._writer().execute("SELECT derived FROM segue_workspaces").fetchone()
        assert got == (fingerprint(),)
        # `segue store init` derives them again for every workspace, as the message says
        store._writer().execute("UPDATE segue_rows SET kind = 3")
        store._writer().execute("UPDATE segue_workspaces SET derived = 'other'")
        assert b"ready" in ok(segue(tmp_path / "home", "store", "init", pg_url))
        assert reader.call({"action": "list_windows"})["ok"] is True
        _same_as_jsonl(store, layout)


def test_a_quarantine_derives_the_row_again(pg_url: str, tmp_path: Path) -> None:
    store, layout = _both(tmp_path, pg_url, history())
    with store:
        assert store.quarantine("40") == HistoryStore(layout, durable=False).quarantine("40")
        _same_as_jsonl(store, layout)
        read = PgSessionHistoryTool(store).call({"action": "read_item", "item_id": "40"})
        assert read["ok"] is False and read["error"]["code"] == "item_not_found"


def test_a_connection_dropped_mid_page(
    pg_cluster: Cluster, pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server ends the session after the page has read some rows back: the call answers
    history_changed; the same cursor then goes on; a floor appended meanwhile ends the
    query (nothing from below it is ever returned)."""
    with PostgresStore(pg_url, WS) as store:
        store.append([make_row("user", f"needle {i}", id=f"n{i}") for i in range(30)])
        tool = PgSessionHistoryTool(store)
        call = {"action": "search", "match": "literal", "query": "needle", "limit": 5}
        first = tool.call(call)
        assert [i["itemId"] for i in first["items"]] == ["29", "28", "27", "26", "25"]
        real = sql_pages._reread
        reads = {"n": 0}

        def dropping(*args: Any, **kwargs: Any) -> Any:
            reads["n"] += 1
            if reads["n"] == 3:  # two rows of the page read back, then the cut
                drop_connections(pg_cluster, pg_url)
            return real(*args, **kwargs)

        monkeypatch.setattr(sql_pages, "_reread", dropping)
        cut = tool.call({**call, "cursor": first["nextCursor"]})
        assert cut["ok"] is False and cut["error"]["code"] == "history_changed"
        assert "call again" in cut["error"]["message"]
        again = tool.call({**call, "cursor": first["nextCursor"]})
        assert [i["itemId"] for i in again["items"]] == ["24", "23", "22", "21", "20"]
        # another machine appends a manual reset: the old query never reaches below it
        reads["n"] = -100
        with PostgresStore(pg_url, WS) as other:
            other.append([Row(id="late", role="assistant", parts=(),
                              metadata={"contextBoundaryKind": "reset"})])
        ended = tool.call({**call, "cursor": again["nextCursor"]})
        assert ended["ok"] is False and ended["error"]["code"] == "stale_cursor", ended
        fresh = tool.call(call)
        assert fresh["ok"] is True and fresh["items"] == []
