"""SPEC.md §7 "Freshness": a one-line rewrite under the lock (the quarantine of a failed send,
R22) re-derives that row in the history index instead of discarding the index.

Observed from outside: the index file is the same file afterwards (same inode, no side file
of a rebuild), the first look-back after the failed send is answered from it (a search reads
only the rows it returns), its answers equal the bounded scan's, and the index then holds
exactly what a rebuild from the transcript would (every row, every full-text term)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from segue._context.boundaries import item_id
from segue._history.store import HistoryStore
from segue._messages import decode_row, make_row
from segue._retrieval import SessionHistoryTool
from segue._retrieval.index_build import rebuild
from segue._retrieval.index_file import build_path, index_path
from segue._workspace import Layout
from tests.index.histories import Op, lines_of, ops, write
from tests.retrieval.helpers import call, entries, rollover

WS = "qws"
KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "SEGUE_HOME")
FAIL = {"error": {"kind": "provider", "message": "upstream 503"}}
CALLS: list[dict[str, Any]] = [
    {"action": "search", "match": "literal", "query": "needle"},
    {"action": "search", "query": "needle gamma"},
    {"action": "search", "query": "quokka"},
    {"action": "search", "match": "literal", "query": "quokka", "order": "oldest"},
    {"action": "list_windows"},
    {"action": "read_item", "item_id": "7"},
]


def _segue(home: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in KEYS}
    return subprocess.run(
        [sys.executable, "-m", "segue", "--home", str(home), "-w", WS, *args],
        cwd=cwd, env=env, input="", capture_output=True, text=True, timeout=120, check=False,
    )


def _fill(layout: Layout, start: int = 0, n: int = 120) -> None:
    store = HistoryStore(layout, durable=False)
    for i in range(start, start + n, 20):
        batch = [
            make_row("user" if j % 2 else "assistant",
                     f"needle {'gamma ' * (j % 3)}row {j} of the history", id=f"r{j}")
            for j in range(i, i + 20)
        ]
        if i == 60:
            batch.insert(5, rollover(60, rid="b60"))
        store.append(batch)


def _failed_send(tmp_path: Path, home: Path, text: str) -> None:
    """``segue run`` whose model fails: its message is quarantined (R22)."""
    script = tmp_path / f"fail-{abs(hash(text))}.json"
    script.write_text(json.dumps({"contextWindow": 8000, "encoding": "o200k_base",
                                  "responses": [FAIL]}))
    proc = _segue(home, tmp_path, "run", "-m", f"scripted:{script}", text)
    assert proc.returncode != 0, proc.stdout
    rows = list(HistoryStore(Layout(home, WS)).rows())
    rejected = [r for r in rows if r.flag("contextBudgetRejected")]
    assert rejected, "the failed send was not quarantined"


def _dump(path: Path) -> dict[str, Any]:
    """Everything an index holds: its rows and, per full-text table, every term's rows."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        out: dict[str, Any] = {
            "rows": conn.execute("SELECT * FROM rows ORDER BY pos").fetchall(),
            # (each index file names itself at random: its lexicon's name)
            "meta": sorted(conn.execute("SELECT k, v FROM meta WHERE k != 'lexicon'").fetchall()),
        }
        tables = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE '%fts5(%'")]
        assert tables
        for name in tables:
            conn.execute(f"CREATE VIRTUAL TABLE temp.v_{name} USING fts5vocab(main, {name}, row)")
            vocab = conn.execute(f"SELECT term, doc FROM temp.v_{name} ORDER BY term")
            out[name] = vocab.fetchall()
        return out
    finally:
        conn.close()


def _same_as_rebuilt(layout: Layout, tmp_path: Path) -> None:
    kept = tmp_path / "kept.sqlite"
    shutil.copyfile(index_path(layout), kept)
    rebuild(layout)
    got, want = _dump(kept), _dump(index_path(layout))
    assert got["rows"] and got == want


def _calls(tool: SessionHistoryTool) -> list[list[dict[str, Any]]]:
    """CALLS, then ``list_items`` of every window, both orders. A words search by relevance
    is compared as a set: the scan ranks within each page it reads (R39)."""
    got = [entries(tool, args) for args in CALLS]
    for i, args in enumerate(CALLS):
        if args["action"] == "search" and "match" not in args and "order" not in args:
            got[i] = sorted(got[i], key=lambda e: int(e["itemId"]))
    windows = [w["windowId"] for w in got[CALLS.index({"action": "list_windows"})]]
    assert len(windows) == 2
    for wid in windows:
        for order in ("oldest", "newest"):
            args = {"action": "list_items", "window_id": wid, "order": order, "limit": 7}
            got.append(entries(tool, args))
    return got


def _answers(layout: Layout) -> list[list[dict[str, Any]]]:
    return _calls(SessionHistoryTool(layout, use_index=False))


def test_a_failed_send_rederives_its_row_in_the_index(tmp_path: Path) -> None:
    home = tmp_path / "home"
    layout = Layout(home, WS)
    _fill(layout)
    assert _segue(home, tmp_path, "history", "reindex").returncode == 0
    inode = index_path(layout).stat().st_ino
    _failed_send(tmp_path, home, "what about the quokka needle?")

    tool = SessionHistoryTool(layout)
    first = call(tool, CALLS[0])
    assert first["ok"] and first["items"]
    # answered from the index: the search read only the rows it returned
    assert first["scanned"]["rows"] == len(first["items"]), first["scanned"]
    assert index_path(layout).stat().st_ino == inode  # the same file: not rebuilt
    assert not build_path(layout).exists()  # and no rebuild started
    assert tool.index_problem is None
    want = _answers(layout)
    assert all(want[:2]) and all(want[4:]), want  # compared on something
    assert want[2] == want[3] == [], "a quarantined message is not an item (R25)"
    got = _calls(tool)
    assert got == want
    assert tool.index_problem is None
    _same_as_rebuilt(layout, tmp_path)


def test_failed_sends_between_look_backs_chain(tmp_path: Path) -> None:
    """Quarantines with appends between, of rows the index holds already (a look-back ran
    during the turn) or not yet: re-derived, as one chain where several come before the next
    look-back; the verify command stays clean."""
    home = tmp_path / "home"
    layout = Layout(home, WS)
    _fill(layout)
    rebuild(layout)
    inode = index_path(layout).stat().st_ino
    store = HistoryStore(layout, durable=False)
    for k in range(4):
        sent = store.append([make_row("user", f"quokka needle {k}", id=f"q{k}")])[0]
        store.append([make_row("assistant", f"needle reply {k}", id=f"a{k}")])
        if k % 2:  # a look-back during the turn: the index holds the row when it is rewritten
            assert call(SessionHistoryTool(layout), CALLS[2])["items"]
        store.quarantine(item_id(sent), send_failure="upstream 503")
    tool = SessionHistoryTool(layout)
    assert _calls(tool) == _answers(layout)
    assert tool.index_problem is None
    assert index_path(layout).stat().st_ino == inode
    verify = _segue(home, tmp_path, "history", "verify")
    assert verify.returncode == 0 and "index" not in verify.stdout + verify.stderr, verify
    _same_as_rebuilt(layout, tmp_path)


@pytest.mark.parametrize("damage", ["digest", "other-epoch", "archive", "garbage"])
def test_a_rewrite_record_that_does_not_check_rebuilds(tmp_path: Path, damage: str) -> None:
    """A record that does not describe the index's bytes is not used: the call scans and the
    index is rebuilt, and the answers are right either way."""
    layout = Layout(tmp_path, WS)
    _fill(layout)
    rebuild(layout)
    store = HistoryStore(layout, durable=False)
    sent = store.append([make_row("user", "quokka needle", id="q")])[0]
    assert call(SessionHistoryTool(layout), CALLS[0])["ok"]  # the index reads the new row
    store.quarantine(item_id(sent), send_failure="upstream 503")
    note = layout.session_dir / "history-index.rewrites.json"
    notes = json.loads(note.read_text())
    if damage == "digest":
        notes[-1]["old_digest"] = "00" * 16
    elif damage == "other-epoch":
        notes[-1]["before"] = "another-epoch"
    elif damage == "archive":
        notes[-1]["source"] = "archive"
    note.write_text("not json" if damage == "garbage" else json.dumps(notes))
    tool = SessionHistoryTool(layout)
    assert call(tool, CALLS[0])["ok"]
    assert tool.index_problem is not None  # not answered from the index
    assert entries(tool, CALLS[0]) == entries(SessionHistoryTool(layout, use_index=False),
                                              CALLS[0])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(ops, min_size=2, max_size=20),
    st.integers(0, 20),
    st.data(),
    st.booleans(),
    st.booleans(),
)
def test_rederived_equals_rebuilt_over_random_histories(
    history: list[Op], split: int, data: st.DataObject, seen: bool, appended: bool
) -> None:
    """Any history shape (floors, rollovers, damaged and raw lines, reused sequences), any
    text row of ``chat.jsonl`` quarantined, the index holding that row already or not, rows
    appended after it or not: the index afterwards holds exactly what a rebuild would, and
    answers as the scan does."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        layout = Layout(root, WS)
        write(layout, history, split)
        chat_rows = [i for i, op in enumerate(history) if op.kind == "text" and i >= split]
        assume(chat_rows)
        rebuild(layout)
        inode = index_path(layout).stat().st_ino
        store = HistoryStore(layout, durable=False)
        if seen:  # a look-back ran after the row was written: the index holds it
            assert call(SessionHistoryTool(layout), {"action": "list_windows"})["ok"]
        target = data.draw(st.sampled_from(chat_rows))
        store.quarantine(item_id(decode_row(lines_of(history)[target])), send_failure="503")
        if appended:
            store.append([make_row("user", "needle appended after", id="after")])
        tool = SessionHistoryTool(layout)
        args = {"action": "search", "match": "literal", "query": "needle"}
        assert entries(tool, args) == entries(SessionHistoryTool(layout, use_index=False), args)
        assert tool.index_problem is None
        assert index_path(layout).stat().st_ino == inode  # re-derived, not rebuilt
        _same_as_rebuilt(layout, root)
