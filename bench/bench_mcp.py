"""Look-back over an imported Claude Code history through ``segue mcp serve`` (issue 15).

A Claude Code session file of ``HISTORY_MB`` (5 MB by default, 100 MB with
``SEGUE_BENCH_SCALE=large``) — user turns, assistant text, tool calls with their results —
holds one planted fact in its first exchange. It is imported with
``segue history import --from claude-code`` (timed once, reported in the note), then an MCP
client from the ``mcp`` SDK asks a real ``segue mcp serve`` subprocess to find it: ``search``
(following ``nextCursor`` while a page has no hit) and ``read_item`` of the hit.

Baseline, side by side in the same process: the same calls to the native in-process
``session_history`` tool. The ratio is the cost of the MCP transport; the goal is the native
call count (1 search + 1 read where the history index answers the search in one call, R35)
and a small constant overhead. Times are the median of 5 interleaved runs, min–max in the note.
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import SCALE, Result

HISTORY_MB = 100 if SCALE == "large" else 5
RUNS = 5
FACT = "the staging database password rotates every 17 days via vault path kv/ops/zebra-4471"
QUERY = "zebra-4471"
WORDS = [
    "parser", "build", "cache", "index", "migrate", "deploy", "retry", "token", "window",
    "module", "config", "test", "fixture", "request", "response", "schema", "handler", "queue",
    "worker", "commit", "branch", "review", "lint", "format", "release",
]


def _line(kind: str, uid: str, content: Any, n: int) -> str:
    day, hour, minute, second = 1 + n // 86400 % 28, n // 3600 % 24, n // 60 % 60, n % 60
    stamp = f"2026-05-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}Z"
    return json.dumps(
        {
            "type": kind,
            "uuid": uid,
            "parentUuid": None,
            "sessionId": "bench-session",
            "timestamp": stamp,
            "message": {"role": kind, "content": content},
        }
    )


def claude_code_history(path: Path, megabytes: int) -> None:
    rng = random.Random(15)

    def prose(words: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(words))

    target = megabytes * 1024 * 1024
    with path.open("w", encoding="utf-8") as out:
        out.write(_line("user", "u0", f"Remember this: {FACT}.", 0) + "\n")
        size, n = 0, 1
        while size < target:
            lines = [
                _line("user", f"u{n}", prose(40), n),
                _line("assistant", f"a{n}", [
                    {"type": "text", "text": prose(30)},
                    {"type": "tool_use", "id": f"t{n}", "name": "Bash",
                     "input": {"command": f"grep -rn {rng.choice(WORDS)} src"}},
                ], n),
                _line("user", f"r{n}", [
                    {"type": "tool_result", "tool_use_id": f"t{n}", "content": prose(180)},
                ], n),
            ]
            block = "\n".join(lines) + "\n"
            out.write(block)
            size += len(block)
            n += 1


def _pages(call: Any, args: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """Call until a page has items or no cursor is left (a bounded scan may need several)."""
    calls = 0
    while True:
        page = call(args)
        calls += 1
        if page["items"] or page["nextCursor"] is None:
            return calls, page
        args = {**args, "cursor": page["nextCursor"]}


def _look_back(call: Any) -> tuple[int, str]:
    searches, found = _pages(call, {"action": "search", "query": QUERY})
    item = found["items"][0]["itemId"]
    reads, read = _pages(call, {"action": "read_item", "item_id": item})
    return searches + reads, str(read["items"][0]["text"])


async def _look_back_mcp(client: Any) -> tuple[int, str]:
    # The same loop as _look_back, with each call a round trip to the server.
    async def pages(args: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        calls = 0
        while True:
            page = (await client.call_tool("session_history", args)).structured_content
            calls += 1
            if page["items"] or page["nextCursor"] is None:
                return calls, dict(page)
            args = {**args, "cursor": page["nextCursor"]}

    searches, found = await pages({"action": "search", "query": QUERY})
    item = found["items"][0]["itemId"]
    reads, read = await pages({"action": "read_item", "item_id": item})
    return searches + reads, str(read["items"][0]["text"])


def run() -> list[Result]:
    try:
        import mcp  # noqa: F401
    except ImportError:
        print("bench_mcp: skipped, the mcp extra is not installed (pip install 'segue[mcp]')",
              file=sys.stderr)
        return []
    import anyio

    import segue
    from mcp import Client, StdioServerParameters
    from segue._history import HistoryStore
    from segue._importers import import_path
    from segue._retrieval import SessionHistoryTool
    from segue._workspace import Layout

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        source = root / "session.jsonl"
        claude_code_history(source, HISTORY_MB)
        layout = Layout(root / "home", "bench")
        start = time.perf_counter()
        imported = import_path(HistoryStore(layout, durable=False), "claude-code", source)
        import_seconds = time.perf_counter() - start
        native_tool = SessionHistoryTool(layout)
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "segue._cli.main", "--home", str(layout.home), "mcp", "serve",
                  "-w", "bench"],
            env={"PYTHONPATH": str(Path(segue.__file__).resolve().parents[1])},
        )
        mcp_times: list[float] = []
        native_times: list[float] = []
        calls: dict[str, int] = {}

        async def measure() -> None:
            async with Client(params, read_timeout_seconds=600) as client:
                for _ in range(RUNS):
                    begin = time.perf_counter()
                    calls["mcp"], text = await _look_back_mcp(client)
                    mcp_times.append(time.perf_counter() - begin)
                    assert FACT in text, text[:200]
                    begin = time.perf_counter()
                    calls["native"], text = _look_back(native_tool.call)
                    native_times.append(time.perf_counter() - begin)
                    assert FACT in text, text[:200]

        anyio.run(measure)
    note = (
        f"{HISTORY_MB} MB, {len(imported.rows)} rows imported in {import_seconds:.1f} s; calls: "
        f"mcp {calls['mcp']}, native {calls['native']}; mcp {min(mcp_times) * 1e3:.1f}–"
        f"{max(mcp_times) * 1e3:.1f} ms, native {min(native_times) * 1e3:.1f}–"
        f"{max(native_times) * 1e3:.1f} ms (median of {RUNS})"
    )
    return [
        Result(
            name=f"mcp serve: find a planted fact in {HISTORY_MB} MB of Claude Code history",
            segue_seconds=statistics.median(mcp_times),
            baseline="native session_history, same calls",
            baseline_seconds=statistics.median(native_times),
            goal="same calls as native (1 search + 1 read with the index); ratio ≤ 1.5",
            note=note,
        )
    ]


if __name__ == "__main__":
    for result in run():
        print(f"{result.name}: {result.segue_seconds * 1e3:.1f} ms vs "
              f"{result.baseline_seconds * 1e3:.1f} ms = {result.ratio:.2f}×  ({result.note})")
