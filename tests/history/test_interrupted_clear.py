"""A hard clear interrupted between its two unlinks (R28, R34, R11).

``clear_all`` publishes a pending receipt and a ``clear`` marker, then unlinks chat and the
archive. Recovery always completes a clear, never rolls it back, so until it runs a reader
must already see the transcript as cleared: showing what is left (the archive without chat)
would show rows from below a manual reset that was at the head of chat, which no answer may
ever contain.
"""

from __future__ import annotations

import os
from pathlib import Path

from segue import HistoryStore, Layout, SessionHistoryTool, make_row
from segue._context.rollover import manual_reset_row
from segue._history.marker import Marker, write_marker
from segue._history.receipt import Receipt, current_stamps, new_epoch, read_receipt, write_receipt


def _crash_between_unlinks(store: HistoryStore) -> None:
    """The state ``clear_all`` leaves when killed right after unlinking chat."""
    layout = store.layout
    floor = read_receipt(layout).next_sequence  # type: ignore[union-attr]
    chat, archive = current_stamps(layout)
    write_receipt(layout, Receipt("pending", new_epoch(), chat, archive, floor), durable=False)
    write_marker(layout, Marker(op="clear"), durable=False)
    os.unlink(layout.chat)


def test_reader_sees_an_interrupted_clear_as_done(tmp_path: Path) -> None:
    store = HistoryStore(Layout(tmp_path, "ws"), durable=False)
    store.append([make_row("user", "secret below the floor", id="s0")])
    store.append([manual_reset_row(row_id="clr", now_ms=1)])  # rotates: s0 is archived
    store.append([make_row("user", "after the floor", id="a0")])
    assert store.layout.archive.exists()
    tool = SessionHistoryTool(store.layout)
    assert tool.call({"action": "search", "query": "secret"})["items"] == []

    _crash_between_unlinks(store)
    assert store.layout.archive.exists() and not store.layout.chat.exists()
    found = tool.call({"action": "search", "query": "secret"})
    assert found["ok"] and found["items"] == [], found
    windows = tool.call({"action": "list_windows"})
    assert windows["ok"] and windows["windows"] == [
        {"windowId": "w:0", "kind": "root", "firstItemId": None, "lastItemId": None, "items": 0}
    ]
    assert list(store.rows()) == []

    assert store.recover().actions == [
        "completed an interrupted clear",
        "published a stable receipt with a new epoch",
    ]
    assert list(store.rows()) == []
    assert store.verify().ok


def _three_rows_then_crashed_clear(home: Path) -> HistoryStore:
    store = HistoryStore(Layout(home, "ws"), durable=False)
    store.append([make_row("user", "one", id="s0")])
    store.append([manual_reset_row(row_id="clr", now_ms=1)])
    store.append([make_row("user", "two", id="a0")])
    _crash_between_unlinks(store)
    return store


def test_sequence_floor_survives_an_interrupted_clear(tmp_path: Path) -> None:
    store = _three_rows_then_crashed_clear(tmp_path)
    (row,) = store.append([make_row("user", "after the clear", id="n0")])
    assert row.sequence is not None and row.sequence > 2


def test_sequence_floor_survives_a_lost_or_foreign_receipt(tmp_path: Path) -> None:
    # The floor lives in segue's sidecar: neither a deleted receipt nor one another writer
    # published in its place lets a sequence be reused.
    for case in ("deleted", "garbage"):
        home = tmp_path / case
        store = _three_rows_then_crashed_clear(home)
        if case == "deleted":
            store.layout.receipt.unlink()
        else:
            store.layout.receipt.write_text('{"version": 1}')
        (row,) = store.append([make_row("user", "after the clear", id="n0")])
        assert row.sequence is not None and row.sequence > 2, case
