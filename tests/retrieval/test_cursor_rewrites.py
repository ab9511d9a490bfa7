"""R26: a cursor survives only verified appends. A same-size rewrite, by segue or by anyone
else, expires it — also once recovery has made the files trusted again under a new epoch —
and it never returns rows from below a floor the rewrite put in."""

from __future__ import annotations

import os
from pathlib import Path

from segue._context.rollover import manual_reset_row
from segue._history import HistoryStore
from segue._messages import encode_row, with_metadata
from segue._retrieval import SessionHistoryTool
from segue._workspace import Layout
from tests.retrieval.helpers import text_row

QUERY = {"action": "search", "query": "word", "limit": 3}


def _history(home: Path) -> tuple[HistoryStore, SessionHistoryTool]:
    store = HistoryStore(Layout(home, "cur"), durable=False)
    store.append([text_row(f"word {i} secret{i}", None, rid=f"r{i}") for i in range(12)])
    return store, SessionHistoryTool(store.layout)


def _same_size_rewrite_with_a_floor(store: HistoryStore) -> None:
    """Replace the newest row with a manual reset of exactly the same length."""
    lines = store.layout.chat.read_bytes().splitlines(keepends=True)
    old = lines[-1]
    reset = with_metadata(manual_reset_row(row_id="x", now_ms=1), historySequence=11)
    new = encode_row(reset)
    pad = len(old) - 1 - len(new)
    assert pad > 10
    new = new[:-1] + b',"pad":"' + b"p" * (pad - 9) + b'"}'
    assert len(new) + 1 == len(old)
    lines[-1] = new + b"\n"
    st = os.stat(store.layout.chat)
    store.layout.chat.write_bytes(b"".join(lines))
    os.utime(store.layout.chat, ns=(st.st_atime_ns, st.st_mtime_ns))  # even the same mtime


def test_a_same_size_rewrite_expires_the_cursor(tmp_path: Path) -> None:
    store, tool = _history(tmp_path)
    first = tool.call(QUERY)
    assert first["ok"] and first["nextCursor"]
    _same_size_rewrite_with_a_floor(store)
    again = tool.call({**QUERY, "cursor": first["nextCursor"]})
    assert again["ok"] is False and again["error"]["code"] == "stale_cursor"


def test_after_recovery_trusts_the_files_again_the_cursor_stays_expired(tmp_path: Path) -> None:
    store, tool = _history(tmp_path)
    first = tool.call(QUERY)
    _same_size_rewrite_with_a_floor(store)
    store.recover()  # a new epoch vouches for the rewritten files
    again = tool.call({**QUERY, "cursor": first["nextCursor"]})
    assert again["ok"] is False and again["error"]["code"] == "stale_cursor"
    fresh = tool.call(QUERY)
    assert fresh["ok"] and fresh["items"] == []  # everything is below the new floor now
