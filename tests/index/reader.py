"""A reader process for the index's multi-process tests.

    python -m tests.index.reader HOME WORKSPACE OUT CALLS

Makes CALLS ``session_history`` calls (search, list_windows, read_item of an item it found),
each answered from the index when it is trusted and caught up under the store lock, and
writes every answer as one JSON line to OUT for the test to check afterwards.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from segue._retrieval import SessionHistoryTool
from segue._workspace import Layout


def main(argv: list[str]) -> int:
    home, workspace, out, calls = argv[:4]
    tool = SessionHistoryTool(Layout(Path(home), workspace))
    seen: list[str] = []
    with open(out, "w", encoding="utf-8") as f:
        for n in range(int(calls)):
            if n % 3 == 0:
                args = {"action": "search", "query": "row", "limit": 25}
            elif n % 3 == 1 or not seen:
                args = {"action": "list_windows", "limit": 50}
            else:
                args = {"action": "read_item", "item_id": seen[n % len(seen)], "limit_chars": 300}
            answer = tool.call(args)
            if answer.get("ok") and args["action"] == "search":
                seen = [i["itemId"] for i in answer["items"]] or seen
            f.write(json.dumps({"args": args, "answer": answer, "index": tool.index_problem}))
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
