"""A damaged index is never an error and never a wrong answer (SPEC.md §7 "Damage"): each
kind of damage gives the scan's answers, then a rebuilt, trusted index. And the floor is
taken from the bytes on disk at the time of the call (an untracked floor included)."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from segue._history.store import HistoryStore
from segue._retrieval import SessionHistoryTool
from segue._retrieval.index_build import rebuild
from segue._retrieval.index_file import index_path, open_index, trusted_meta
from segue._retrieval.snapshot import take
from segue._workspace import Layout
from tests.retrieval.helpers import (
    encoded,
    entries,
    manual_reset,
    rollover,
    text_row,
    write_history,
)

CALLS: list[dict[str, Any]] = [
    {"action": "search", "match": "literal", "query": "needle"},
    {"action": "search", "match": "literal", "query": "needle", "order": "oldest", "limit": 2},
    {"action": "list_windows"},
    {"action": "list_items", "window_id": "w:3"},
    {"action": "read_item", "item_id": "1"},
]


def _history(layout: Layout) -> None:
    archive = encoded([text_row("old needle", 0), text_row("needle two", 1), rollover(3)])
    chat = encoded([text_row("newer needle", 4), text_row("plain", 5), text_row("needle!", 6)])
    write_history(layout, archive, chat)


def _answers(tool: SessionHistoryTool) -> list[list[dict[str, Any]]]:
    return [entries(tool, args) for args in CALLS]


def _trusted(layout: Layout) -> bool:
    conn = open_index(layout, write=False)
    try:
        trusted_meta(conn, layout, take(layout))
        return True
    finally:
        conn.close()


@pytest.fixture
def layout(tmp_path: Path) -> Layout:
    layout = Layout(tmp_path / "home", "ws")
    _history(layout)
    rebuild(layout)
    return layout


def _delete(layout: Layout) -> None:
    index_path(layout).unlink()


def _truncate(layout: Layout) -> None:
    path = index_path(layout)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _garbage(layout: Layout) -> None:
    path = index_path(layout)
    path.write_bytes(bytes(range(256)) * (path.stat().st_size // 256 + 1))


def _foreign(layout: Layout) -> None:
    other = Layout(layout.home, "other")
    _history(other)
    rebuild(other)
    shutil.copyfile(index_path(other), index_path(layout))


def _old_schema(layout: Layout) -> None:
    conn = sqlite3.connect(index_path(layout))
    conn.execute("UPDATE meta SET v = 'segue-history-index/0' WHERE k = 'schema'")
    conn.commit()
    conn.close()


def _wrong_digest(layout: Layout) -> None:
    conn = sqlite3.connect(index_path(layout))
    conn.execute("UPDATE rows SET digest = zeroblob(16) WHERE kind = 0")
    conn.commit()
    conn.close()


def _forged_tokens(layout: Layout) -> None:
    """The literal tables claim every row holds "needle" and "forged": every candidate is
    verified on its re-read text, so no answer changes."""
    conn = sqlite3.connect(index_path(layout))
    conn.execute("INSERT INTO lit (rowid, body) SELECT pos, 'needle forged' FROM rows")
    conn.execute("INSERT OR IGNORE INTO lex (term) VALUES ('needle'), ('forged')")
    conn.execute("INSERT INTO lexgrams (rowid, term) SELECT id, term FROM lex")
    conn.commit()
    conn.close()


DAMAGE: dict[str, Callable[[Layout], None]] = {
    "deleted": _delete,
    "truncated": _truncate,
    "garbage": _garbage,
    "foreign": _foreign,
    "old schema": _old_schema,
    "row digest differs": _wrong_digest,
    "tokens claim every row": _forged_tokens,
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_damaged_index_answers_from_the_scan_then_is_rebuilt(layout: Layout, damage: str) -> None:
    want = _answers(SessionHistoryTool(layout, use_index=False))
    DAMAGE[damage](layout)
    tool = SessionHistoryTool(layout)
    first = entries(tool, CALLS[0])
    assert first == want[0]
    assert _trusted(layout)  # rebuilt after that call
    assert _answers(tool) == want
    assert tool.index_problem is None  # ... and these answers came from it


def test_index_locked_by_another_process(layout: Layout) -> None:
    want = _answers(SessionHistoryTool(layout, use_index=False))
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys\n"
            f"c = sqlite3.connect({str(index_path(layout))!r}, isolation_level=None)\n"
            "c.execute('BEGIN EXCLUSIVE')\n"
            "print('locked', flush=True)\n"
            "sys.stdin.readline()\n",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        tool = SessionHistoryTool(layout)
        assert entries(tool, CALLS[0]) == want[0]
        assert tool.index_problem is not None and "locked" in tool.index_problem
        assert _trusted(layout)  # a new file took the locked one's place
        assert _answers(tool) == want
        assert tool.index_problem is None
    finally:
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.close()
        holder.wait(timeout=30)
        assert holder.stdout is not None
        holder.stdout.close()


def test_untracked_floor_is_honoured_on_the_next_call(layout: Layout) -> None:
    tool = SessionHistoryTool(layout)
    assert [i["itemId"] for i in entries(tool, CALLS[0])] == ["6", "4", "1", "0"]
    assert tool.index_problem is None
    with open(layout.chat, "ab") as f:  # another writer, without the lock or the receipt
        f.write(encoded([manual_reset(7)])[0] + b"\n")
    assert entries(tool, CALLS[0]) == []
    assert entries(tool, {"action": "list_windows"})[0]["kind"] == "reset"
    assert tool.call({"action": "read_item", "item_id": "6"})["error"]["code"] == "item_not_found"


def test_untracked_torn_floor_tail_is_honoured(layout: Layout) -> None:
    tool = SessionHistoryTool(layout)
    entries(tool, CALLS[0])
    with open(layout.chat, "ab") as f:  # a reset key in bytes without a newline
        f.write(b'{"id":"t","metadata":{"contextBoundaryKind":"reset"')
    assert entries(tool, CALLS[0]) == []


def test_verified_floor_append_is_caught_up(layout: Layout) -> None:
    tool = SessionHistoryTool(layout)
    assert len(entries(tool, CALLS[0])) == 4
    store = HistoryStore(layout, durable=False)
    store.append([text_row("needle after", None, rid="a1")])
    got = entries(tool, CALLS[0])
    assert tool.index_problem is None
    assert got[0]["text"] == "needle after"
    store.append([manual_reset(99)])  # a reset rotates: a new epoch, so a rebuild
    assert entries(tool, CALLS[0]) == []
    assert tool.index_problem == "the transcript was rewritten since the index was built"
    assert entries(tool, CALLS[0]) == []
    assert tool.index_problem is None  # the rebuilt index
    store.append([text_row("needle above the floor", None, rid="a2")])
    assert [i["text"] for i in entries(tool, CALLS[0])] == ["needle above the floor"]
    assert tool.index_problem is None  # caught up


def test_no_index_is_written_during_a_xum_stream(tmp_path: Path) -> None:
    layout = Layout(tmp_path / "home", "ws")
    _history(layout)
    (layout.session_dir / "partial.json").write_text("{}")
    tool = SessionHistoryTool(layout)
    assert len(entries(tool, CALLS[0])) == 4
    assert not index_path(layout).exists()
    assert not Path(str(index_path(layout)) + ".build").exists()


def test_read_only_tool_never_creates_an_index(tmp_path: Path) -> None:
    layout = Layout(tmp_path / "home", "ws")
    _history(layout)
    tool = SessionHistoryTool(layout, build_index=False)
    assert len(entries(tool, CALLS[0])) == 4
    assert sorted(p.name for p in layout.session_dir.iterdir()) == [
        "chat-archive.jsonl",
        "chat.jsonl",
        "history-append-journal.json",
        "history-append-provenance.json",
    ]


def test_catch_up_is_bounded_per_call(layout: Layout, monkeypatch: pytest.MonkeyPatch) -> None:
    """A large append is caught up over several calls (each answered by the scan meanwhile),
    never by a rebuild."""
    monkeypatch.setattr("segue._retrieval.index_build.CATCH_UP_BYTES", 4096)
    HistoryStore(layout, durable=False).append(
        [text_row(f"needle appended {i} " + "q" * 300, None, rid=f"n{i}") for i in range(60)]
    )
    inode = index_path(layout).stat().st_ino
    want = SessionHistoryTool(layout, use_index=False).call(CALLS[0])["items"]
    tool = SessionHistoryTool(layout)
    problems = []
    for _ in range(10):
        assert tool.call(CALLS[0])["items"] == want
        problems.append(tool.index_problem)
    assert problems[0] == "the index has not caught up yet"
    assert problems[-1] is None
    assert index_path(layout).stat().st_ino == inode
