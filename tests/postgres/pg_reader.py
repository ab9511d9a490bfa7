"""A reader process for the PostgreSQL concurrency test.

    python -m tests.postgres.pg_reader URL WORKSPACE STOP_FILE OUT_FILE

Until STOP_FILE exists (and once more after), pages ``session_history`` searches through
the PostgreSQL store's tool, cursor by cursor, and checks every page on the way: answers are
ok, item ids strictly decrease across the pages of one query (newest first) and never repeat.
Writes a JSON summary to OUT_FILE: pages, queries, the error codes met, any violations and
every item id seen.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from segue.postgres._history_tool import PgSessionHistoryTool
from segue.postgres._store import PostgresStore


def one_query(tool: PgSessionHistoryTool, summary: dict[str, Any]) -> None:
    call: dict[str, Any] = {"action": "search", "match": "literal", "query": "row", "limit": 25}
    last: int | None = None
    seen: set[int] = set()
    summary["queries"] += 1
    while True:
        answer = tool.call(call)
        summary["pages"] += 1
        if not answer["ok"]:
            code = answer["error"]["code"]
            summary["errors"][code] = summary["errors"].get(code, 0) + 1
            return
        for item in answer["items"]:
            n = int(item["itemId"])
            if n in seen or (last is not None and n >= last):
                summary["violations"].append(f"item {n} after {last}")
            seen.add(n)
            last = n
            summary["items"].add(n)
        cursor = answer["nextCursor"]
        if cursor is None:
            return
        call = {**call, "cursor": cursor}


def main(argv: list[str]) -> int:
    url, workspace, stop, out = argv
    summary: dict[str, Any] = {"pages": 0, "queries": 0, "errors": {}, "violations": [],
                               "items": set()}
    with PostgresStore(url, workspace) as store:
        tool = PgSessionHistoryTool(store)
        while not Path(stop).exists():
            one_query(tool, summary)
        one_query(tool, summary)
    summary["items"] = sorted(summary["items"])
    Path(out).write_text(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
