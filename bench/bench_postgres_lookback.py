"""``session_history`` search on the PostgreSQL store against the JSONL store's history index,
side by side in one process, on realistic agent rows (:mod:`bench.agent_rows`: the recorded
runs, varied pass after pass; no rollover windows, as bench_index fills by default), with one
planted fact in the middle.

Both sides answer the same calls, each the first page an agent's call gets: ``match:
"literal"`` (R23: a rare string, searched through the whole history above the floor, and a
common one, the first page newest first) and ``match: "words"`` in relevance order (R39: a
rare word, a common one, and a question in natural words). The PostgreSQL side answers in
SQL (each row's literal tokens, a ``tsvector`` with a GIN index, and the workspace's
vocabulary for literal search; the ``tsvector`` words column, its GIN index and BM25 in SQL
for words); the JSONL side from its SQLite index (token candidates from FTS5 verified on the
text; the FTS5 words table and ``bm25()``), built before the runs as an agent's calls leave
it. After the copy into PostgreSQL the table is vacuumed and analysed, as autovacuum leaves
a table that has been written to (without it, the first minute after a bulk load plans
without statistics and sets every row's hint bits).

30 MB by default, 200 MB with ``SEGUE_BENCH_SCALE=large``. Each figure is the median of 7
interleaved runs with the min-max in the note; the targets (issue 25) are <= 1.5x at 30 MB and
<= 1x from 200 MB up. Before timing, each call is checked: a literal search returns the same
items on both sides, and a words search the same first item when the history has one best
answer (the planted fact), the overlap of the first pages otherwise (printed).
"""

from __future__ import annotations

import functools
import shutil
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

from bench import agent_rows
from bench.bench_postgres import RUNS, _median_pair, _server, server_settings
from bench.common import SCALE, Result
from segue._history.store import HistoryStore
from segue._messages import Row, make_row
from segue._workspace import Layout

MB = 1 << 20
FACT = "the staging deploy uses the zebracorn-4471 rollout key"
#: (label, arguments) of the calls timed; the words search's default order is relevance
CALLS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("literal, a rare string", {"match": "literal", "query": "zebracorn-4471"}),
    ("literal, a common string", {"match": "literal", "query": "Traceback"}),
    ("words, a rare word", {"query": "zebracorn"}),
    ("words, a common word", {"query": "error"}),
    ("words, a question", {"query": "which rollout key does the staging deploy use?"}),
)


def _fill(layout: Layout, size: int) -> None:
    store = HistoryStore(layout, durable=False)
    source = agent_rows.rows("pgl")
    written = 0
    planted = False
    while written < size:
        batch: list[Row] = []
        if not planted and written >= size // 2:
            batch.append(make_row("user", FACT, id="pgl-fact"))
            planted = True
        batch.extend(next(source) for _ in range(20))
        store.append(batch)
        written = layout.chat.stat().st_size


def _ids(answer: dict[str, Any]) -> list[str]:
    return [str(i["itemId"]) for i in answer.get("items", [])]


def _check(label: str, call: dict[str, Any], got: dict[str, Any], want: dict[str, Any]) -> str:
    if not (got["ok"] and want["ok"]):
        raise RuntimeError(f"session_history failed for {call!r}: {got} / {want}")
    mine, theirs = _ids(got), _ids(want)
    if call.get("match") == "literal" and mine != theirs:
        raise RuntimeError(f"session_history literal answers differ for {call!r}")
    best = "rare" in label or "question" in label
    if best and (not mine or not theirs or mine[0] != theirs[0]):
        raise RuntimeError(f"the best item differs for {call!r}: {mine[:1]} / {theirs[:1]}"
                           f" ({got} / {want})")
    same = len(set(mine) & set(theirs))
    return f"{len(mine)} items, {same} on both first pages"


def _vacuum(url: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM (ANALYZE) segue_rows")


def _derivation() -> Result:
    """What the words column costs an append: ``rows.words_of`` over the items of realistic
    rows against the term analysis it is built from (``retrieval.words.terms``, which the
    JSONL index pays too), interleaved; the note gives the rate of a row's whole
    derivation (``rows.agent_of``, words included)."""
    import itertools
    import statistics
    import time

    from segue._messages import encode_row
    from segue._retrieval.project import classify
    from segue._retrieval.reader import RawLine
    from segue._retrieval.words import terms
    from segue.postgres._rows import agent_of, people_of, words_of

    raws = [encode_row(r) for r in itertools.islice(agent_rows.rows("pgd"), 3000)]
    texts = [seen.item.text for raw in raws
             if (seen := classify(RawLine(0, len(raw) + 1, raw, False, True))).item]
    megabytes = sum(len(r) for r in raws) / 1e6
    t_words: list[float] = []
    t_terms: list[float] = []
    t_rows: list[float] = []
    for _ in range(5):
        for times, work in ((t_words, lambda: [words_of(t) for t in texts]),
                            (t_terms, lambda: [terms(t) for t in texts]),
                            (t_rows, lambda: [agent_of(r, pos=i, off=0, win=0,
                                                       people=people_of(r))
                                              for i, r in enumerate(raws)])):
            start = time.perf_counter()
            work()
            times.append(time.perf_counter() - start)
    rows_s = statistics.median(t_rows)
    return Result(
        name="postgres: words column derivation",
        segue_seconds=statistics.median(t_words),
        baseline="the term analysis alone (retrieval.words.terms)",
        baseline_seconds=statistics.median(t_terms),
        goal="printed (an append's cost: the write side's)",
        note=(f"{len(raws)} rows, {megabytes:.1f} MB; a row's whole derivation with words "
              f"{megabytes / rows_s:.1f} MB/s; median of 5, min-max "
              f"{min(t_words) * 1e3:.0f}-{max(t_words) * 1e3:.0f} ms vs "
              f"{min(t_terms) * 1e3:.0f}-{max(t_terms) * 1e3:.0f} ms"),
    )


def run() -> list[Result]:
    url = _server()
    if url is None:
        return []
    from segue._retrieval.index_build import rebuild
    from segue._retrieval.tool import SessionHistoryTool
    from segue.postgres._history_tool import PgSessionHistoryTool
    from segue.postgres._migrate import jsonl_to_postgres
    from segue.postgres._store import PostgresStore

    print(f"bench_postgres_lookback: {server_settings(url)}", file=sys.stderr)
    print(f"bench_postgres_lookback {agent_rows.describe()} (here without rollover windows)",
          file=sys.stderr)
    size = 200 * MB if SCALE == "large" else 30 * MB
    root = Path(tempfile.mkdtemp(prefix="segue-bench-pgl-"))
    results: list[Result] = [_derivation()]
    try:
        ws = "l-" + uuid.uuid4().hex[:8]
        layout = Layout(root, ws)
        layout.session_dir.mkdir(parents=True)
        _fill(layout, size)
        jsonl_to_postgres(layout, url)
        _vacuum(url)
        rebuild(layout)
        with PostgresStore(url, ws) as pg:
            tool = PgSessionHistoryTool(pg)
            disk_tool = SessionHistoryTool(layout)
            for label, extra in CALLS:
                call = {"action": "search", **extra}
                checked = _check(label, call, tool.call(call), disk_tool.call(call))
                t_pg, t_disk, note = _median_pair(
                    functools.partial(tool.call, call), functools.partial(disk_tool.call, call),
                    runs=RUNS,
                )
                goal = "<= 1x from 200 MB up" if SCALE == "large" else "<= 1.5x at 30 MB"
                results.append(Result(
                    name=f"postgres: session_history {label} @ {size // MB} MB",
                    segue_seconds=t_pg,
                    baseline="JSONL session_history with its history index",
                    baseline_seconds=t_disk,
                    goal=goal,
                    note=f"{checked}; {note}",
                ))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return results
