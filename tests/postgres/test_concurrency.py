"""4 writer processes and 2 paging readers on one workspace in PostgreSQL: every batch whole,
sequences unique and strictly increasing, no acknowledged batch lost, and cursors honest
(verified appends never expire them; pages of one query never repeat or go backwards)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from segue.postgres._store import PostgresStore
from tests.conftest import scaled
from tests.history.helpers import check_batches_whole
from tests.postgres.test_crash import ENV, ROOT, _reap, acked, writer

__all__ = ["_reap"]


@pytest.mark.slow
def test_four_writers_two_readers(pg_url: str, tmp_path: Path) -> None:
    batches = scaled(120, 600)
    # no schema yet: the six processes' first uses race to create it (one migrates, the
    # others wait for it and find it done)
    writers = [
        writer(pg_url, "ws", f"w{i}", batches, tmp_path / f"ack-{i}") for i in range(4)
    ]
    stop = tmp_path / "stop"
    readers = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.postgres.pg_reader", pg_url, "ws", str(stop),
             str(tmp_path / f"read-{i}.json")],
            cwd=ROOT, env=ENV,
        )
        for i in range(2)
    ]
    try:
        for proc in writers:
            assert proc.wait(timeout=600) == 0
    finally:
        stop.touch()
        for proc in readers:
            proc.wait(timeout=600)
    assert all(proc.returncode == 0 for proc in readers)
    with PostgresStore(pg_url, "ws") as store:
        rows = list(store.rows())
        present = check_batches_whole(rows)  # whole batches, strictly increasing sequences
        assert store.verify().ok
    for i in range(4):
        assert acked(tmp_path / f"ack-{i}") == present[f"w{i}"] == set(range(batches))
    sequences = {r.sequence for r in rows}
    assert sequences == set(range(len(rows)))  # unique, none skipped, none reused
    for i in range(2):
        summary = json.loads((tmp_path / f"read-{i}.json").read_text())
        assert summary["violations"] == []
        assert summary["errors"] == {}  # verified appends never expire a cursor
        assert summary["queries"] >= 2
        assert set(summary["items"]) <= sequences
        # the last query ran after every writer finished: it saw every row
        assert len(summary["items"]) == len(rows)
