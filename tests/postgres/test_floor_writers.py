"""R11 through the PostgreSQL writers, against a real server: ``import`` into the PostgreSQL
store, ``history migrate`` both ways (the agent's columns derived from the lines' bytes) and
a re-derivation keep a floor a floor and invent none, as every R11 spelling is judged by the
public tool (see tests/history/test_floor_writers.py for the generated lines)."""

from __future__ import annotations

import tempfile
import uuid
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings

from segue._workspace import Layout
from segue.postgres._history_tool import PgSessionHistoryTool
from segue.postgres._migrate import jsonl_to_postgres, postgres_to_jsonl
from segue.postgres._store import PostgresStore
from tests.history.test_floor_writers import AFTER, LINES, SECRET, _check
from tests.retrieval.helpers import entries, write_history

SETTINGS = settings(max_examples=15, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])


def _pg_texts(store: PostgresStore) -> set[str]:
    tool = PgSessionHistoryTool(store)
    found: list[dict[str, Any]] = []
    for query in ("SECRET", "AFTER"):
        found += entries(tool, {"action": "search", "query": query})
    return {item["text"] for item in found}


def _pg_check(store: PostgresStore, is_floor: bool) -> None:
    texts = _pg_texts(store)
    assert "AFTER" in texts
    assert ("SECRET" in texts) is (not is_floor)


@SETTINGS
@given(LINES)
def test_import_into_postgresql_keeps_a_floor_a_floor(pg_url: str, case: Any) -> None:
    line, is_floor = case
    with PostgresStore(pg_url, f"imp-{uuid.uuid4().hex[:12]}") as store:
        try:
            store.import_rows(SECRET + b"\n" + line + b"\n" + AFTER + b"\n")
        except Exception as exc:  # refused, naming the line: nothing stored
            message = str(exc)
            assert "line 2" in message
            assert not list(store.lines())
            return
        _pg_check(store, is_floor)


@SETTINGS
@given(LINES)
def test_migrate_both_ways_keeps_the_floor_exactly(pg_url: str, case: Any) -> None:
    line, is_floor = case
    ws = f"mig-{uuid.uuid4().hex[:12]}"
    tmp = Path(tempfile.mkdtemp(prefix="floor-pg-"))
    source = Layout(tmp / "a", ws)
    write_history(source, [SECRET], [line, AFTER])
    jsonl_to_postgres(source, pg_url)
    with PostgresStore(pg_url, ws) as store:
        _pg_check(store, is_floor)
    back = Layout(tmp / "b", ws)
    postgres_to_jsonl(pg_url, back)
    assert back.chat.read_bytes() == source.chat.read_bytes()
    _check(back, is_floor)
