"""``read_item`` with ``context`` over PostgreSQL: the located item's real neighbours, read
from where the item is (with ``offset_chars``, and in a window of 2,000 items), as on the
JSONL store (tests/retrieval/test_read_item_context.py)."""

from __future__ import annotations

from typing import Any

from segue._messages import make_row
from segue.postgres._history_tool import PgSessionHistoryTool
from segue.postgres._store import PostgresStore
from tests.retrieval.helpers import rollover


def _ids(page: dict[str, Any]) -> list[str]:
    assert page["ok"], page
    return [i["itemId"] for i in page["items"]]


def test_neighbours_on_postgresql(pg_url: str) -> None:
    store = PostgresStore(pg_url, "ws")
    try:
        store.append([make_row("user", "before the window", id="r0"), rollover(1)])
        for start in range(0, 2000, 500):
            store.append([make_row("user", f"item {i} " + "word " * 30, id=f"r{i}")
                          for i in range(start, start + 500)])
        tool = PgSessionHistoryTool(store)
        # ids follow the sequence: "item i" is item i + 2, the window's first is "2"
        assert _ids(tool.call({"action": "read_item", "item_id": "2", "context": 1})) == [
            "2", "3"]
        at = 1990 + 2
        got = tool.call({"action": "read_item", "item_id": str(at), "context": 2,
                         "offset_chars": 100})
        assert _ids(got) == [str(i) for i in range(at - 2, at + 3)]
        assert got["items"][2]["text"] == ("item 1990 " + "word " * 30)[100:]
        assert got.get("note") is None
        assert got["scanned"]["rows"] == 5  # the item and its neighbours only
    finally:
        store.close()
