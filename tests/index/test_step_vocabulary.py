"""SPEC.md §7, §6: a rebuild by steps fills the literal search's token vocabulary (``lex`` and
its trigram table ``lexgrams``) once, after every line is in, from SQLite's own vocabulary of
``lit`` (as a whole rebuild does), and not batch by batch from Python. That phase is bounded
like the lines: a step past its deadline puts one chunk of terms in and commits how far it
got; the next step goes on from there, a step that stops in it before its commit loses
only itself, and the
index that comes out holds exactly the vocabulary a whole rebuild gives, so literal searches
for pieces inside tokens answer the same."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from segue._history.store import HistoryStore
from segue._messages import make_row
from segue._retrieval import SessionHistoryTool, index_steps
from segue._retrieval.index_build import rebuild
from segue._retrieval.index_file import build_path, index_path
from segue._retrieval.index_steps import build_step
from segue._workspace import Layout
from tests.retrieval.helpers import entries

CHUNK = 7  # terms per statement of the vocabulary phase, so that it spans many steps
#: literal queries whose answers need ``lex``: pieces inside tokens, prefixes, suffixes
QUERIES: list[dict[str, Any]] = [
    {"action": "search", "match": "literal", "query": "ConfigLoad"},
    {"action": "search", "match": "literal", "query": "fig_1"},
    {"action": "search", "match": "literal", "query": "ory_7"},
    {"action": "search", "match": "literal", "query": "se_conf", "order": "oldest"},
]


def _history(layout: Layout) -> None:
    store = HistoryStore(layout, durable=False)
    for b in range(6):
        store.append([
            make_row("assistant", f"parse_config_{b}{i} failed: ConfigLoadError in "
                     f"src/app/factory_{i % 9}.py line {i}; retry {b}", id=f"r{b}-{i}")
            for i in range(40)
        ])  # fmt: skip


def _vocabulary(path: Path) -> tuple[list[str], list[tuple[str, int]]]:
    """``lex``'s terms, and ``lexgrams``' trigrams with how many terms hold each."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        terms = [t for (t,) in conn.execute("SELECT term FROM lex ORDER BY term")]
        conn.execute("CREATE VIRTUAL TABLE temp.g USING fts5vocab(main, lexgrams, row)")
        grams = conn.execute("SELECT term, doc FROM temp.g ORDER BY term").fetchall()
        return terms, grams
    finally:
        conn.close()


def _meta(layout: Layout, key: str) -> str | None:
    conn = sqlite3.connect(f"file:{build_path(layout)}?mode=ro", uri=True)
    try:
        row = conn.execute("SELECT v FROM meta WHERE k = ?", (key,)).fetchone()
        return None if row is None else str(row[0])
    finally:
        conn.close()


def _by_steps(layout: Layout) -> int:
    """Build by steps each past its deadline; the steps of the vocabulary phase."""
    late = time.monotonic() - 1
    in_vocabulary = 0
    for _ in range(1000):
        if build_step(layout, deadline=late) is not None:
            return in_vocabulary
        in_vocabulary += _meta(layout, "steps_lex") is not None
    raise AssertionError("the steps never finished")


def test_steps_fill_the_vocabulary_a_chunk_per_late_step_as_a_rebuild_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(index_steps, "MIN_STEP_BYTES", 4 << 10)
    monkeypatch.setattr(index_steps, "LEX_CHUNK", CHUNK)
    layout = Layout(tmp_path, "ws")
    _history(layout)
    rebuild(layout)
    whole = _vocabulary(index_path(layout))
    wanted = [entries(SessionHistoryTool(layout, build_index=False), q) for q in QUERIES]
    index_path(layout).unlink()

    in_vocabulary = _by_steps(layout)
    terms = len(whole[0])
    assert terms > 20 * CHUNK
    # one chunk per late step (the step that finished the lines may do none)
    assert terms // CHUNK - 1 <= in_vocabulary <= terms // CHUNK + 2
    assert _vocabulary(index_path(layout)) == whole
    tool = SessionHistoryTool(layout, build_index=False)
    got = [entries(tool, q) for q in QUERIES]
    assert tool.index_problem is None
    assert all(got), "every query finds something"
    assert got == wanted
    scan = SessionHistoryTool(layout, use_index=False)
    assert got == [entries(scan, q) for q in QUERIES]


def test_a_step_that_fails_in_the_vocabulary_loses_only_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(index_steps, "MIN_STEP_BYTES", 1 << 20)  # the lines in one step
    monkeypatch.setattr(index_steps, "LEX_CHUNK", CHUNK)
    layout = Layout(tmp_path, "ws")
    _history(layout)
    rebuild(layout)
    whole = _vocabulary(index_path(layout))
    index_path(layout).unlink()
    late = time.monotonic() - 1
    assert build_step(layout, deadline=late) is None  # the lines, and no chunk: it is late
    assert _meta(layout, "steps_lex") == ""
    assert build_step(layout, deadline=late) is None  # one chunk
    after = _meta(layout, "steps_lex")
    assert after

    real = index_steps._vocabulary

    def broken(conn: sqlite3.Connection, *args: Any, **kwargs: Any) -> str | None:
        real(conn, *args, **kwargs)
        raise RuntimeError("the process stops here")  # as a kill would, before COMMIT

    monkeypatch.setattr(index_steps, "_vocabulary", broken)
    with pytest.raises(RuntimeError, match="stops here"):
        build_step(layout)
    monkeypatch.setattr(index_steps, "_vocabulary", real)
    assert _meta(layout, "steps_lex") == after  # rolled back to the step before
    assert build_step(layout) is not None  # no deadline: the rest at once
    assert _vocabulary(index_path(layout)) == whole
