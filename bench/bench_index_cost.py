"""Where a history index rebuild's SQLite time goes (SPEC.md §6: rebuild ≥ 40 MB/s, that is
25 ms per MB): the batches a real rebuild of an 8 MB history of realistic agent rows
(:mod:`bench.agent_rows`, as :mod:`bench.bench_index` builds it) inserts, replayed table by
table into fresh in-memory databases, CPU ms per MB of transcript, medians of 5 with min–max;
and the ``words`` table's options side by side on the same batches:

* ``detail`` full (the index's), column and none: the insert time, the table's size, and
  whether ``bm25()`` still ranks (on a contentless table FTS5 reads a row's term frequencies
  from its position lists; without them every score is 0);
* each item's distinct terms only (what an encoding of counts as extra spellings would
  insert), with the Python time the de-duplication itself takes.

    python -m bench.bench_index_cost
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from bench.bench_index import _fill
from segue._retrieval import index_build
from segue._retrieval.index_ddl import DDL
from segue._workspace import Layout

RUNS = 5
_HASH = "INSERT INTO t (t, rank) VALUES ('hashsize', 8388608);"


def _table(detail: str) -> str:
    return f"CREATE VIRTUAL TABLE t USING fts5(x, content='', tokenize='ascii', detail='{detail}');"


def _insert_ms(ddl: str, sql: str, data: Sequence[tuple[object, ...]], mb: float) -> str:
    times = []
    for _ in range(RUNS):
        conn = sqlite3.connect(":memory:")
        conn.executescript(ddl)
        start = time.process_time()
        conn.executemany(sql, data)
        conn.commit()
        times.append((time.process_time() - start) * 1000 / mb)
        conn.close()
    return f"{statistics.median(times):.1f} ms/MB ({min(times):.1f}–{max(times):.1f})"


def main() -> None:
    os.environ["SEGUE_INDEX_WORKER"] = "off"
    root = Path(tempfile.mkdtemp())
    try:
        layout = Layout(root, "cost")
        _fill(layout, 8, "s0")
        mb = sum(p.stat().st_size for p in (layout.archive, layout.chat) if p.exists()) / (1 << 20)
        batches: list[index_build.Batch] = []
        insert = index_build.insert_batch

        def keep(conn: sqlite3.Connection, batch: index_build.Batch) -> None:
            batches.append(batch)
            insert(conn, batch)

        index_build.insert_batch = keep
        try:
            index_build.rebuild(layout)
        finally:
            index_build.insert_batch = insert
        rows = [r for b in batches for r in b.rows]
        lit = [r for b in batches for r in b.lit]
        words = [r for b in batches for r in b.words]
        terms = sum(len(str(w[1]).split()) for w in words)
        print(os.popen("uptime").read().strip())
        print(f"{mb:.1f} MB of transcript; words: {terms / mb:,.0f} terms per MB")
        print("rows   ", _insert_ms(DDL, index_build._INSERT, rows, mb))
        print("lit    ", _insert_ms(
            "CREATE VIRTUAL TABLE t USING fts5(x, content='', tokenize='ascii', "
            "detail='none', columnsize=0);" + _HASH,
            "INSERT INTO t (rowid, x) VALUES (?, ?)", lit, mb))
        for detail in ("full", "column", "none"):
            path = root / f"words-{detail}.sqlite"
            conn = sqlite3.connect(path)
            conn.executescript(_table(detail) + _HASH)
            conn.executemany("INSERT INTO t (rowid, x) VALUES (?, ?)", words)
            conn.commit()
            query = " OR ".join(f'"{t}"' for t in str(words[len(words) // 2][1]).split()[:3])
            scores = [s for (s,) in conn.execute(
                "SELECT bm25(t) FROM t WHERE t MATCH ? LIMIT 50", (query,))]
            conn.close()
            print(f"words detail={detail:6s}",
                  _insert_ms(_table(detail) + _HASH, "INSERT INTO t (rowid, x) VALUES (?, ?)",
                             words, mb),
                  f"size {path.stat().st_size / (mb * (1 << 20)):.2f}x the transcript,",
                  "bm25() ranks" if any(scores) else "bm25() is 0 for every row")
        start = time.process_time()
        distinct = [(r, " ".join(dict.fromkeys(str(t).split()))) for r, t in words]
        dedup = (time.process_time() - start) * 1000 / mb
        kept = sum(len(t.split()) for _, t in distinct)
        print(f"words, each item's distinct terms only ({kept / mb:,.0f} per MB), detail=none",
              _insert_ms(_table("none") + _HASH, "INSERT INTO t (rowid, x) VALUES (?, ?)",
                         distinct, mb),
              f"+ {dedup:.1f} ms/MB of Python to de-duplicate")
        print(os.popen("uptime").read().strip())
    finally:
        shutil.rmtree(root)


if __name__ == "__main__":
    main()
