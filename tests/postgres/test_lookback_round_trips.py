"""What one ``session_history`` call costs the server, counted where it cannot be hidden: the
statements the server logs for it (``log_statement = all`` on the test database only). A
first page is one transaction of a fixed, small number of statements: its ``BEGIN`` with
the statement that reads the workspace row and the floor (one round trip), the vocabulary
and the candidates with their rows for a literal search, the ranking with the ranked rows
for a words search, and the ``ROLLBACK``. A statement added to that path fails here."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psycopg
import pytest

from segue._messages import Row, make_row
from segue.postgres._history_tool import PgSessionHistoryTool
from segue.postgres._store import PostgresStore
from tests.postgres.cluster import Cluster

FACT = "the staging deploy uses the zebracorn-4471 rollout key"
#: what the server logs of a statement: the simple protocol's, and the extended protocol's
_LOGGED = re.compile(r"LOG:  (?:statement|execute [^:]*): (.*)")


def _rows() -> list[Row]:
    rows = [make_row("user", f"note {k}: the deploy failed with error {k}", id=f"n{k}")
            for k in range(40)]
    rows.insert(20, make_row("user", FACT, id="fact"))
    return rows


def _logged(cluster: Cluster, url: str) -> None:
    name = urlsplit(url).path.lstrip("/")
    with psycopg.connect(cluster.url(), autocommit=True) as conn:
        conn.execute(f"ALTER DATABASE \"{name}\" SET log_statement = 'all'")


def _statements(log: Path, start: int, workspace: str) -> list[str]:
    """The statements logged after ``start`` by the call (the backend writes its log line
    before it answers; a short wait lets the file catch up all the same)."""
    time.sleep(0.2)
    with log.open(errors="replace") as f:
        f.seek(start)
        text = f.read()
    found = [m.group(1) for m in _LOGGED.finditer(text)]
    assert found, "the server logged no statement: the count would pin nothing"
    return found


def _call(cluster: Cluster, store: PostgresStore, args: dict[str, Any]) -> tuple[
    dict[str, Any], list[str]
]:
    tool = PgSessionHistoryTool(store)
    assert tool.call(args)["ok"]  # connections opened, schema checked: not part of a call
    log = cluster.root / "log"
    start = log.stat().st_size
    got = tool.call(args)
    return got, _statements(log, start, store.workspace_id)


@pytest.fixture
def store(pg_cluster: Cluster, pg_url: str) -> Any:
    _logged(pg_cluster, pg_url)
    with PostgresStore(pg_url, "rt") as pg:
        pg.append(_rows())
        yield pg


@pytest.mark.parametrize("query", ["zebracorn-4471", "deploy failed"])
def test_a_literal_search_page_is_five_statements(
    pg_cluster: Cluster, store: PostgresStore, query: str
) -> None:
    got, statements = _call(
        pg_cluster, store, {"action": "search", "match": "literal", "query": query}
    )
    assert got["ok"] and got["items"]
    assert statements[0].startswith("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
    assert statements[-1] == "ROLLBACK"
    # BEGIN + the workspace row and floor + the vocabulary (one round trip), the candidates
    # with their rows, ROLLBACK
    assert len(statements) == 5, statements


@pytest.mark.parametrize("query", ["zebracorn", "which rollout key does the deploy use?"])
def test_a_words_search_page_is_four_statements(
    pg_cluster: Cluster, store: PostgresStore, query: str
) -> None:
    got, statements = _call(pg_cluster, store, {"action": "search", "query": query})
    assert got["ok"] and got["items"][0]["text"] == FACT
    # BEGIN + the workspace row and floor (one round trip), the ranking with the first
    # ranked rows, ROLLBACK
    assert len(statements) == 4, statements


def test_a_literal_search_looks_its_pieces_up_in_the_first_round_trip(
    store: PostgresStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The vocabulary lookup needs nothing the head statement reads: it is sent in the same
    pipeline as ``BEGIN`` and the head, so a literal search's first page waits for the
    server three times (that pipeline, the candidates, ``ROLLBACK``), not four."""
    tool = PgSessionHistoryTool(store)
    args = {"action": "search", "match": "literal", "query": "zebracorn-4471"}
    assert tool.call(args)["ok"]
    sent: list[tuple[str, bool]] = []
    execute = psycopg.Connection.execute

    def recording(self: psycopg.Connection[Any], query: Any, *a: Any, **kw: Any) -> Any:
        sent.append((str(query), self._pipeline is not None))
        return execute(self, query, *a, **kw)

    monkeypatch.setattr(psycopg.Connection, "execute", recording)
    got = tool.call(args)
    assert got["ok"] and got["items"][0]["text"] == FACT
    pipelined = [sql for sql, inside in sent if inside]
    assert len(pipelined) == 3, sent
    assert pipelined[0].startswith("BEGIN") and "segue_lex" in pipelined[2]
    assert not any(inside for sql, inside in sent[3:]), sent
