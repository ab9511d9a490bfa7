"""Every statement the PostgreSQL store issues is keyed by one workspace, so the schema
distributes on Citus with the workspace as the distribution column and each of a call's
queries goes to one shard (README: "Fleets on PostgreSQL").

The statements of a representative workload (appends on both paths, a rotation, a
quarantine, reads forwards and backwards, people's search, session_history pages of every
action with cursors, verify) are captured at the driver; each one that touches a segue
table is planned on the server (EXPLAIN with its own parameters), and every scan of a
segue table in the plan must be restricted to ``workspace = '<that workspace>'``; an
INSERT or COPY must write that workspace only. Statements on no segue table (the lock, the
notification, transaction control) have nothing to distribute."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import pytest

from segue._messages import make_row
from segue.postgres import _search as pg_search
from segue.postgres._history_tool import PgSessionHistoryTool
from segue.postgres._schema import connect, ensure_schema
from segue.postgres._store import PostgresStore

WS = "citus-ws"
OTHER = "citus-other"
TABLES = ("segue_rows", "segue_workspaces", "segue_lex")
#: one row of schema bookkeeping read when a connection opens (a reference table on Citus)
GLOBAL = ("segue_schema", "pg_extension", "pg_available_extensions", "to_regclass")

Captured = list[tuple[str, Any]]


@contextmanager
def capture(monkeypatch: pytest.MonkeyPatch) -> Iterator[Captured]:
    seen: Captured = []
    for cls in (psycopg.Cursor, psycopg.ServerCursor):
        real = cls.execute

        def execute(self: Any, query: Any, params: Any = None, *a: Any, _real: Any = real,
                    **k: Any) -> Any:
            seen.append((query if isinstance(query, str) else query.as_string(self), params))
            return _real(self, query, params, *a, **k)

        monkeypatch.setattr(cls, "execute", execute)
    real_copy = psycopg.Cursor.copy

    def copy(self: Any, statement: Any, params: Any = None, *a: Any, **k: Any) -> Any:
        seen.append(("COPY", statement))
        return real_copy(self, statement, params, *a, **k)

    monkeypatch.setattr(psycopg.Cursor, "copy", copy)
    yield seen
    monkeypatch.undo()


def workload(url: str) -> None:
    other = PostgresStore(url, OTHER)
    other.append([make_row("user", "another workspace's deploy log", id="o1")])
    store = PostgresStore(url, WS)
    for b in range(4):
        store.append([
            make_row("user", f"run the deploy script, attempt {b}", id=f"u{b}"),
            make_row("assistant", f"deploy failed: error E{b} in step {b}", id=f"a{b}"),
            make_row("user", "x" * 40, id=f"x{b}"),
        ])
        other.append([make_row("user", f"other batch {b}", id=f"o{b}")])  # the guard misses
    store.append([make_row("assistant", "rollover", id="b1",
                           metadata={"contextBoundaryKind": "reset"})])
    store.append([make_row("user", "after the reset: deploy again", id="after")])
    store.append([make_row("user", f"bulk {i}", id=f"bulk{i}") for i in range(70)])  # COPY
    with store.locked():
        store.append([make_row("user", "inside the lock", id="held")])
    store.quarantine("2")
    list(store.rows())
    list(store.lines_reverse())
    list(pg_search.search(store, "deploy"))
    list(pg_search.search(store, "EPLOY"))  # a piece inside a token: the vocabulary
    list(pg_search.search(store, "y again"))
    store.verify()
    store.epoch()
    tool = PgSessionHistoryTool(store)
    windows = tool.call({"action": "list_windows"})
    assert windows["ok"] and windows["windows"], windows
    calls: list[dict[str, Any]] = [
        {"action": "list_windows"},
        {"action": "list_items", "window_id": windows["windows"][-1]["windowId"], "limit": 1},
        {"action": "search", "query": "deploy"},
        {"action": "search", "query": "deploy failed", "limit": 1},
        {"action": "search", "query": "deploy", "role": "user", "order": "oldest"},
        {"action": "search", "match": "literal", "query": "deploy"},
        {"action": "search", "match": "literal", "query": "PLOY FAIL"},
        {"action": "search", "match": "literal", "query": "eplo", "order": "oldest"},
        {"action": "search", "match": "literal", "query": "ul"},
    ]
    for call in calls:
        got = tool.call(call)
        assert got["ok"], got
        cursor = got.get("nextCursor") or got.get("cursor")
        if cursor:
            assert tool.call({**call, "cursor": cursor})["ok"]
        for item in got.get("items", [])[:1]:
            read = tool.call({"action": "read_item", "item_id": item["itemId"]})
            assert read["ok"], read
    store.close()
    other.close()


def tables_in(sql: str) -> set[str]:
    return {t for t in TABLES if re.search(rf"\b{t}\b", sql)}


def scans(plan: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(relation, every condition at or below the node) for each scan of a segue table."""
    def conditions(node: dict[str, Any]) -> str:
        own = " ".join(str(node.get(k, "")) for k in
                       ("Index Cond", "Filter", "Recheck Cond", "Hash Cond", "TID Cond"))
        return own + " " + " ".join(conditions(c) for c in node.get("Plans", []))

    relation = plan.get("Relation Name")
    if relation in TABLES and "Scan" in plan.get("Node Type", ""):
        yield relation, conditions(plan)
    for child in plan.get("Plans", []):
        yield from scans(child)


def test_every_statement_names_one_workspace(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # the schema first: migrations and their backfill walk every workspace by design (an
    # administrator's `segue store init`, run once, not a call of an agent)
    conn = connect(pg_url)
    ensure_schema(conn)
    conn.close()
    with capture(monkeypatch) as seen:
        workload(pg_url)
    checked = {"planned": 0, "inserts": 0, "copies": 0, "calls": 0}
    with psycopg.connect(pg_url, autocommit=True) as conn:
        for sql, params in seen:
            if sql == "COPY":
                assert "segue_rows (workspace," in str(params)
                checked["copies"] += 1  # the rows' workspace column is checked below
                continue
            if "FROM segue_append(" in sql:
                # one workspace's append, the function's first argument (its statements
                # are checked below)
                assert params[0] in (WS, OTHER), sql
                checked["calls"] += 1
                continue
            touched = tables_in(sql)
            if not touched:
                continue
            head = sql.lstrip().split(None, 1)[0].upper()
            if head == "INSERT" and "VALUES" in sql and "segue_rows" in sql:
                values = list(params)
                width = len(values) // sql.count("(%s")
                assert {values[i] for i in range(0, len(values), width)} <= {WS, OTHER}, sql
                checked["inserts"] += 1
                continue
            if head == "INSERT":  # the workspace row itself, keyed by its id
                assert params[0] in (WS, OTHER), sql
                checked["inserts"] += 1
                continue
            with conn.transaction(force_rollback=True):
                plan = conn.execute("EXPLAIN (FORMAT JSON) " + sql, params).fetchone()
            assert plan is not None
            nodes = list(scans(json.loads(plan[0])[0]["Plan"]
                               if isinstance(plan[0], str) else plan[0][0]["Plan"]))
            assert nodes, f"no scan of a segue table in the plan of {sql}"
            for relation, cond in nodes:
                named = set(re.findall(r"workspace = '([^']*)'::text", cond))
                assert len(named) == 1 and named <= {WS, OTHER}, (relation, cond, sql)
            checked["planned"] += 1
        rows = conn.execute(
            "SELECT DISTINCT workspace FROM segue_rows ORDER BY 1"
        ).fetchall()
    assert [r[0] for r in rows] == sorted([WS, OTHER])  # nothing written anywhere else
    # the workload really went through reads, the tool's pages, both append paths and COPY
    assert checked["planned"] >= 20 and checked["calls"] >= 10, checked
    assert checked["inserts"] >= 1 and checked["copies"] >= 1, checked
    # and literal searches through the vocabulary: a prefix range and the trigram index
    assert any("segue_grams(term) @>" in sql for sql, _ in seen)
    assert any("FROM segue_lex WHERE workspace = %s AND term >= %s" in sql for sql, _ in seen)


def test_the_append_function_touches_its_workspace_only() -> None:
    # the function's statements on segue tables, each keyed by its workspace argument
    # (on Citus: create_distributed_function with the workspace as distribution argument)
    from segue.postgres._append_call import function_ddl

    body = function_ddl().split("$fn$")[1]
    statements = [s.strip() for s in body.split(";")
                  if tables_in(s) and not s.strip().startswith("DECLARE")]
    assert len(statements) == 5, statements
    for sql in statements:
        assert (
            "WHERE workspace = ws" in sql
            or ("INSERT INTO segue_rows" in sql and "SELECT ws, " in sql)
            or ("INSERT INTO segue_lex" in sql and "SELECT ws, " in sql)
            or "VALUES (ws," in sql
        ), sql
