"""Look-back after the history index is lost or a failed send is quarantined (SPEC.md §6:
"back on the index within 3 calls; no call over 1 s"; §7 "Freshness"; issue 27 §4).

A history of realistic agent rows (:mod:`bench.agent_rows`: the recorded runs, varied and
repeated, with a rollover window every ~400 KB) of 10 MB (100 MB with
``SEGUE_BENCH_SCALE=large``) and a trusted index. Then, five times each:

(a) the index file is deleted;
(b) a message is sent and the send fails: the store quarantines it (R22), a one-line rewrite
    under the lock with a new epoch;

and the agent looks back: a paging search (by relevance, then literal, cursor and all; a
finished look-back is followed by the next query) until a call is answered from the index.
Each row reports the calls that took (the call that answered from the index included) and
the slowest of those calls, medians of 5 with min–max, against one call on the trusted index
timed side by side in the same process.

(a) is measured twice more with the tool a long-lived process uses (``background=True``: a
child process rebuilds the index between calls, index_builder.py): with no pause between
calls, and with :data:`PAUSE` seconds between them, standing for the model's step between
two look-back calls (printed; also between the tool's making, as a session opens, and the
first call: the model's first step). Those rows also note the seconds until the index
answered, from the tool's making.
The machine's load average is printed at the start and the end.
``SEGUE_BENCH_RECOVERY=builder`` runs only those rows (the 100 MB run is long).
"""

from __future__ import annotations

import contextlib
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench import agent_rows
from bench.common import SCALE, Result
from segue._context.boundaries import item_id
from segue._context.rollover import boundary_row
from segue._history.store import HistoryStore
from segue._messages import Row, make_row
from segue._retrieval import SessionHistoryTool
from segue._retrieval.index_build import rebuild
from segue._retrieval.index_file import build_path, index_path
from segue._workspace import Layout

LARGE = SCALE == "large"
BUILDER_ONLY = os.environ.get("SEGUE_BENCH_RECOVERY") == "builder"
SIZE_MB = 100 if LARGE else 10
RUNS = 5
MAX_CALLS = 1000
#: seconds between two look-back calls standing for the model's step (a reply streamed, a
#: tool run) in the background-builder rows
PAUSE = 2.0
QUERIES: list[dict[str, Any]] = [
    {"action": "search", "query": "failing test AttributeError traceback"},
    {"action": "search", "match": "literal", "query": "Traceback", "limit": 5},
    {"action": "search", "query": "which file did we edit first"},
]


def _boundary(tag: str, n: int) -> Row:
    """A rollover boundary Xum's validators accept (a window, not a floor)."""
    return boundary_row(
        row_id=f"{tag}-window-{n}",
        rollover_id=f"{tag}-rollover-{n}",
        reason="on-send",
        previous_window_id=f"w:m:{tag}-window-{n - 1}" if n > 1 else "w:0",
        context_tokens=150_000,
        max_tokens=200_000,
        now_ms=1_700_000_000_000 + n,
    )


def _size(layout: Layout) -> int:
    total = 0
    for path in (layout.archive, layout.chat):
        with contextlib.suppress(FileNotFoundError):
            total += path.stat().st_size
    return total


def _fill(layout: Layout, megabytes: int, tag: str) -> None:
    store = HistoryStore(layout, durable=False)
    target = megabytes << 20
    source = agent_rows.rows(tag)
    window_at = agent_rows.WINDOW_BYTES
    windows = 0
    while (end := _size(layout)) < target:
        batch: list[Row] = []
        if end >= window_at:
            windows += 1
            batch.append(_boundary(tag, windows))
            window_at = end + agent_rows.WINDOW_BYTES
        batch.extend(next(source) for _ in range(20))
        store.append(batch)


def _calls(tool: SessionHistoryTool) -> Iterator[tuple[float, bool]]:
    """The agent's look-back calls, each as (seconds, answered from the index)."""
    while True:
        for args in QUERIES:
            cursor: str | None = None
            while True:
                start = time.perf_counter()
                page = tool.call(args if cursor is None else {**args, "cursor": cursor})
                spent = time.perf_counter() - start
                assert page["ok"], page
                # from the index: no index problem, and no more rows read than returned
                read = page["scanned"]["rows"] <= len(page["items"])
                yield spent, tool.index_problem is None and read
                cursor = page["nextCursor"]
                if cursor is None:
                    break


def _recover(
    tool: SessionHistoryTool, pause: float = 0.0, before: float = 0.0
) -> tuple[int, float]:
    """(calls until one is answered from the index, the slowest of them), ``pause``
    seconds between two calls and ``before`` seconds between the tool's making and the
    first call."""
    time.sleep(before)
    slowest = 0.0
    for n, (spent, indexed) in enumerate(_calls(tool), start=1):
        slowest = max(slowest, spent)
        if indexed:
            return n, slowest
        if n >= MAX_CALLS:
            break
        time.sleep(pause)
    return MAX_CALLS, slowest


def _lose(layout: Layout) -> None:
    for path in (index_path(layout), build_path(layout)):
        path.unlink(missing_ok=True)


def _failed_send(layout: Layout, n: int) -> None:
    store = HistoryStore(layout, durable=False)
    sent = store.append([make_row("user", f"run the failing test again ({n})", id=f"send-{n}")])
    store.quarantine(item_id(sent[0]), send_failure="upstream 503")


def _trusted_call(layout: Layout) -> float:
    tool = SessionHistoryTool(layout, build_index=False)
    start = time.perf_counter()
    page = tool.call(QUERIES[0])
    spent = time.perf_counter() - start
    assert page["ok"], page
    assert tool.index_problem is None, tool.index_problem
    return spent


def _span(values: list[float], fmt: str) -> str:
    return f"median of {len(values)}, {fmt.format(min(values))}–{fmt.format(max(values))}"


def _rows(
    label: str, calls: list[float], slowest: list[float], trusted: list[float], calls_note: str
) -> list[Result]:
    """The two §6 rows of one case: calls until on the index, and the slowest call."""
    worst_ms = [s * 1e3 for s in slowest]
    return [
        Result(
            f"{label}: calls to the index",
            statistics.median(calls),
            "the §6 target (3 calls)",
            3.0,
            "<= 3 calls (§6)",
            ratio_meaning="calls / 3",
            unit="calls",
            note=calls_note,
        ),
        Result(
            f"{label}: slowest call",
            statistics.median(slowest),
            "a call on the trusted index",
            statistics.median(trusted),
            "no call over 1 s (§6)",
            note=f"{_span(worst_ms, '{:.0f}')} ms; the §6 bound is 1000 ms",
        ),
    ]


def _case(layout: Layout, name: str, event: Any) -> list[Result]:
    calls: list[float] = []
    slowest: list[float] = []
    trusted: list[float] = []
    for run in range(RUNS):
        trusted.append(_trusted_call(layout))
        event(layout, run)
        n, worst = _recover(SessionHistoryTool(layout))
        calls.append(float(n))
        slowest.append(worst)
    label = f"look-back after {name}, {SIZE_MB} MB"
    return _rows(label, calls, slowest, trusted, _span(calls, "{:.0f}"))


def _calls_note(calls: list[float], seconds: list[float]) -> str:
    if max(calls) >= MAX_CALLS:  # a run that was cut off: its seconds are not "on the index"
        cut = sum(c >= MAX_CALLS for c in calls)
        return f"{_span(calls, '{:.0f}')}; {cut} of {len(calls)} runs cut off at {MAX_CALLS} calls"
    after = f"{statistics.median(seconds):.1f} s ({_span(seconds, '{:.1f}')} s)"
    return f"{_span(calls, '{:.0f}')}; on the index after {after}"


def _background_case(layout: Layout, pause: float) -> list[Result]:
    from segue._retrieval import index_builder

    calls: list[float] = []
    slowest: list[float] = []
    trusted: list[float] = []
    seconds: list[float] = []
    for _run in range(RUNS):
        trusted.append(_trusted_call(layout))
        _lose(layout)
        start = time.perf_counter()
        n, worst = _recover(SessionHistoryTool(layout, background=True), pause, pause)
        seconds.append(time.perf_counter() - start)
        assert index_builder.join(layout, 60.0), "the builder did not end"
        calls.append(float(n))
        slowest.append(worst)
    label = f"look-back after a lost index, {SIZE_MB} MB, builder, {pause:g} s between calls"
    return _rows(label, calls, slowest, trusted, _calls_note(calls, seconds))


def _load(when: str) -> None:
    """The machine's load average (the figures depend on what else runs)."""
    one, five, _ = os.getloadavg()
    print(f"bench_lookback_recovery: load average {one:.1f} / {five:.1f} {when}", file=sys.stderr)


def run() -> list[Result]:
    print(f"bench_lookback_recovery {agent_rows.describe()}", file=sys.stderr)
    print(f"bench_lookback_recovery: builder rows pause {PAUSE:g} s between calls", file=sys.stderr)
    _load("at the start")
    with tempfile.TemporaryDirectory() as tmp:
        layout = Layout(Path(tmp), "recovery")
        _fill(layout, SIZE_MB, "rec")
        rebuild(layout)
        steps = [] if BUILDER_ONLY else [
            *_case(layout, "a lost index", lambda lay, _run: _lose(lay)),
            *_case(layout, "a failed send", _failed_send),
        ]
        results = [
            *steps,
            *_background_case(layout, 0.0),
            *_background_case(layout, PAUSE),
        ]
    _load("at the end")
    return results
