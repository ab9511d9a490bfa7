"""``session_history`` over the PostgreSQL store answers exactly as over the JSONL store for
the same rows: every page of every action, the floors, and cursors that survive verified
appends and expire on rewrites (R11, R23-R27), with a real server."""

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
from segue.postgres._history_tool import PgSessionHistoryTool
from segue.postgres._store import PostgresStore
from tests.test_views import session_rows

#: a literal search (R23), the default before words search (R39)
LITERAL: dict[str, Any] = {"action": "search", "match": "literal"}

WS = "ws"
ROLLOVER = {
    "contextBoundaryKind": "reset",
    "muxMetadata": {
        "type": "context-window-rollover", "rolloverId": "r1", "reason": "on-send",
        "previousWindowId": "w:0", "flushOpportunity": False, "contextTokens": 10,
        "maxTokens": 100,
    },
}


def history() -> list[list[Row]]:
    """Batches: a realistic window, a rollover, long rows, a compaction, more rows."""
    batches: list[list[Row]] = [session_rows(with_sequences=False)]
    batches.append([
        make_row("assistant", id="b1", metadata=dict(ROLLOVER)),
        make_row("user", "Window two begins", id="lead",
                 metadata={"synthetic": True, "uiVisible": False}),
    ])
    for i in range(30):
        batches.append([
            make_row("user", f"question {i} about the needle " + "x" * (i * 97), id=f"q{i}"),
            make_row("assistant", f"answer {i}: ÄÖÜ straße NEEDLE " + "y" * 300, id=f"a{i}"),
        ])
    batches.append([make_row("assistant", "summary", id="c1",
                             metadata={"compactionBoundary": True, "compacted": True,
                                       "compactionEpoch": 1})])
    batches.append([make_row("user", "after the compaction, the needle again", id="z")])
    return batches


class Pair:
    """The same history in both stores, and a tool over each with small bounds."""

    def __init__(self, tmp_path: Path, url: str, **bounds: Any) -> None:
        self.jsonl = HistoryStore(Layout(tmp_path / "jsonl", WS), durable=False)
        self.pg = PostgresStore(url, WS)
        self.jsonl_tool = SessionHistoryTool(self.jsonl.layout, **bounds)
        self.pg_tool = PgSessionHistoryTool(self.pg, **bounds)

    def append(self, rows: list[Row]) -> None:
        a = self.jsonl.append(rows)
        b = self.pg.append(rows)
        assert a == b

    def call(self, args: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        return self.jsonl_tool.call(args), self.pg_tool.call(args)


@pytest.fixture
def pair(tmp_path: Path, pg_url: str) -> Iterator[Pair]:
    p = Pair(tmp_path, pg_url, max_bytes=4096, max_rows=7)
    for batch in history():
        p.append(batch)
    rebuild(p.jsonl.layout)  # the JSONL store with its index, as an agent's calls leave it
    yield p
    p.pg.close()


def _strip(answer: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    rest = dict(answer)
    cursor = rest.pop("nextCursor", None)
    return rest, cursor is not None


def _unscanned(answer: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in answer.items() if k != "scanned"}


CALLS: list[dict[str, Any]] = [
    {"action": "list_windows"},
    {"action": "search", "match": "literal", "query": "needle"},
    {"action": "search", "match": "literal", "query": "STRASSE"},
    {"action": "search", "match": "literal", "query": "ab"},
    {**LITERAL, "query": "needle", "role": "assistant", "order": "oldest"},
    {"action": "list_items", "window_id": "w:0", "limit": 3},
    {"action": "list_items", "window_id": "w:15"},
    {"action": "read_item", "item_id": "30", "limit_chars": 50},
    {"action": "read_item", "item_id": "0"},
    {"action": "list_items", "window_id": "w:999"},
]


@pytest.mark.parametrize("call", CALLS, ids=lambda c: "-".join(str(v) for v in c.values()))
def test_every_page_is_the_same(pair: Pair, call: dict[str, Any]) -> None:
    cursors: dict[str, str | None] = {"j": None, "p": None}
    for _ in range(100):
        a = dict(call, **({"cursor": cursors["j"]} if cursors["j"] else {}))
        b = dict(call, **({"cursor": cursors["p"]} if cursors["p"] else {}))
        ja, pa = pair.jsonl_tool.call(a), pair.pg_tool.call(b)
        assert _strip(pa) == _strip(ja)
        cursors = {"j": ja.get("nextCursor"), "p": pa.get("nextCursor")}
        if cursors["j"] is None:
            break
    else:
        pytest.fail("paging did not end")


def test_cursors_survive_appends_and_expire_on_rewrites(pair: Pair) -> None:
    call = {"action": "search", "match": "literal", "query": "needle"}
    ja, pa = pair.call(call)
    assert _strip(pa) == _strip(ja) and ja["nextCursor"]
    pair.append([make_row("user", "a fresh needle", id="n1")])
    jb = pair.jsonl_tool.call(dict(call, cursor=ja["nextCursor"]))
    pb = pair.pg_tool.call(dict(call, cursor=pa["nextCursor"]))
    assert jb["ok"] is True
    # The same page; only ``scanned`` differs, honestly: the JSONL page read the appended
    # bytes to look for a new floor, PostgreSQL looked the floor up in its index.
    assert _strip(_unscanned(pb)) == _strip(_unscanned(jb))
    assert pb["scanned"]["bytes"] < jb["scanned"]["bytes"]
    assert jb["nextCursor"] and pb["nextCursor"]
    assert pair.jsonl.quarantine("40") == pair.pg.quarantine("40")
    jc = pair.jsonl_tool.call(dict(call, cursor=jb["nextCursor"]))
    pc = pair.pg_tool.call(dict(call, cursor=pb["nextCursor"]))
    assert jc["error"]["code"] == "stale_cursor"
    assert pc == jc


def test_a_new_floor_hides_older_rows_on_both(pair: Pair) -> None:
    call = {"action": "search", "match": "literal", "query": "needle"}
    ja, pa = pair.call(call)
    pair.append([make_row("assistant", id="soft", metadata={"contextBoundaryKind": "reset"})])
    jb = pair.jsonl_tool.call(dict(call, cursor=ja["nextCursor"]))
    pb = pair.pg_tool.call(dict(call, cursor=pa["nextCursor"]))
    # the reset batch rotates the history: a rewrite on disk, a new epoch in PostgreSQL
    assert jb["error"]["code"] == "stale_cursor"
    assert pb == jb
    rebuild(pair.jsonl.layout)  # the JSONL store with its index again after the rotation
    fresh_j, fresh_p = pair.call(call)
    assert _strip(fresh_p) == _strip(fresh_j)
    assert fresh_j["items"] == []  # nothing above the floor mentions it


def test_hard_clear_expires_cursors_on_both(pair: Pair) -> None:
    call = {"action": "list_windows", "limit": 1}
    ja, pa = pair.call(call)
    assert _strip(pa) == _strip(ja) and ja["nextCursor"]
    pair.jsonl.clear_all()
    pair.pg.clear_all()
    jb = pair.jsonl_tool.call(dict(call, cursor=ja["nextCursor"]))
    pb = pair.pg_tool.call(dict(call, cursor=pa["nextCursor"]))
    assert jb["error"]["code"] == "stale_cursor"
    assert pb == jb
