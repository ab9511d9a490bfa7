"""``session_history`` costs (issue 4).

1. ``search`` over one full 2 MiB scan window of realistic rows (the packaged SWE-agent
   trajectories as segue rows, tool calls included, via ``bench_scan.realistic_jsonl``). The row
   bound is lifted for this measurement so the byte bound governs (500 rows of these average
   ~1.2 MB). Baseline, the floor: read the same bytes and ``lower().find`` the query. Three
   queries: a plain word and one with a quote (both skip rows by the exact byte pre-filter on
   their longest letter run), and one of digits and punctuation only (no letter run, so every
   row is parsed and projected: the slow path, reported for tracking). Goal ≤ 5× the floor.
2. Peak memory of paging a search with no hit through a whole history (200 MB by default,
   1 GB with ``SEGUE_BENCH_SCALE=large``), in a fresh subprocess, against the same subprocess
   importing everything and doing nothing. Goal: flat, under 100 MB. Its time is reported
   against a raw read of the same file.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.bench_scan import realistic_jsonl
from bench.common import SCALE, Result, side_by_side
from segue._history.receipt import Receipt, current_stamps, new_epoch, write_receipt
from segue._history.store import HistoryStore
from segue._retrieval import MAX_SCAN_BYTES, SessionHistoryTool
from segue._workspace import Layout

HISTORY_MB = 1000 if SCALE == "large" else 200

_CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from segue._retrieval import SessionHistoryTool
from segue._workspace import Layout

home, mode = Path(sys.argv[1]), sys.argv[2]
calls = 0
start = time.perf_counter()
if mode == "page":
    tool = SessionHistoryTool(Layout(home, "bench"), use_index=False)  # the scan itself
    args = {"action": "search", "query": "zqxjv-not-there"}
    result = tool.call(args)
    calls = 1
    while result["nextCursor"] is not None:
        result = tool.call({**args, "cursor": result["nextCursor"]})
        calls += 1
    assert result["ok"], result
seconds = time.perf_counter() - start
peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"peak_mb": peak_kb / 1024, "calls": calls, "seconds": seconds}))
"""


def _stamp(layout: Layout) -> None:
    """A stable receipt for files written directly, and the store's lock file, as the writer
    that made them would have left it (a reader never creates it, and would say so)."""
    chat, archive = current_stamps(layout)
    write_receipt(layout, Receipt("stable", new_epoch(), chat, archive), durable=False)
    with HistoryStore(layout).locked():
        pass


def _write_history(layout: Layout, data: bytes, total: int) -> None:
    layout.session_dir.mkdir(parents=True, exist_ok=True)
    with open(layout.archive, "wb") as f:
        written = 0
        while written < total:
            f.write(data)
            written += len(data)
    layout.chat.write_bytes(data[: data.index(b"\n") + 1])
    _stamp(layout)


def _child(home: Path, mode: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(home), mode], check=True, capture_output=True
    )
    result: dict[str, float] = json.loads(out.stdout)
    return result


def _search_window(tmp: Path, data: bytes) -> list[Result]:
    layout = Layout(tmp, "window")
    layout.session_dir.mkdir(parents=True)
    layout.chat.write_bytes(data)
    _stamp(layout)
    tool = SessionHistoryTool(layout, max_rows=1 << 30, use_index=False)
    results = []
    queries = (
        ("plain word", "zqxjv-not-there", "<= 5x"),
        ("with a quote", 'zqxjv"no', "<= 5x"),
        ("no letters: every row parsed", '"9}:7{', "report (slow path)"),
    )
    for label, query, goal in queries:
        args: dict[str, object] = {"action": "search", "query": query}
        scanned = tool.call(args)["scanned"]["bytes"]

        def baseline(query: str = query, scanned: int = scanned) -> None:
            with open(layout.chat, "rb") as f:
                f.seek(len(data) - scanned)
                f.read(scanned).lower().find(query.lower().encode())

        def measured(args: dict[str, object] = args) -> None:
            tool.call(args)

        segue_s, base_s = side_by_side(measured, baseline, repeat=9 if SCALE == "large" else 5)
        results.append(
            Result(
                name=f"retrieval search 2 MiB window ({label})",
                segue_seconds=segue_s,
                baseline="read + lower().find of the same bytes",
                baseline_seconds=base_s,
                goal=goal,
                note=f"{scanned} bytes scanned per call",
            )
        )
    return results


def run() -> list[Result]:
    with tempfile.TemporaryDirectory(prefix="segue-bench-retrieval-") as tmp_name:
        tmp = Path(tmp_name)
        window = realistic_jsonl(MAX_SCAN_BYTES)
        window = window[: window.rindex(b"\n", 0, MAX_SCAN_BYTES) + 1]
        results = _search_window(tmp, window)

        home = tmp / "paging"
        layout = Layout(home, "bench")
        _write_history(layout, window, HISTORY_MB * 1_000_000)
        idle = _child(home, "idle")
        paged = _child(home, "page")
        start = time.perf_counter()
        with open(layout.archive, "rb") as f:
            while f.read(1 << 20):
                pass
        raw = time.perf_counter() - start
        grew = paged["peak_mb"] - idle["peak_mb"]
        results.append(
            Result(
                name=f"retrieval paging {HISTORY_MB} MB history",
                segue_seconds=paged["seconds"],
                baseline="raw read of the same file",
                baseline_seconds=raw,
                goal="peak RSS flat, < 100 MB",
                note=(
                    f"peak RSS {paged['peak_mb']:.1f} MB vs {idle['peak_mb']:.1f} MB idle "
                    f"(+{grew:.1f} MB) over {int(paged['calls'])} calls"
                ),
            )
        )
    return results
