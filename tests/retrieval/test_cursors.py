"""Cursors (R26, R29, R30): survive verified appends (this process and another), expire on
every other change, and reject tampering and foreign bindings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from segue._context.rollover import manual_reset_row, rollover_batch
from segue._history import HistoryStore
from segue._history.receipt import read_receipt
from segue._messages import encode_row
from segue._retrieval import SessionHistoryTool
from segue._workspace import Layout
from tests.retrieval.helpers import call, stamp_receipt, text_row


@pytest.fixture
def layout(segue_home: Path) -> Layout:
    lay = Layout(segue_home, "cur")
    store = HistoryStore(lay, durable=False)
    store.append([text_row(f"row {i} needle", None, rid=f"u{i}") for i in range(30)])
    return lay


def first_page(tool: SessionHistoryTool) -> dict[str, Any]:
    result = call(tool, {"action": "search", "query": "needle", "limit": 5})
    assert result["ok"] and result["nextCursor"]
    return result


def next_page(tool: SessionHistoryTool, cursor: str) -> dict[str, Any]:
    return call(tool, {"action": "search", "query": "needle", "limit": 5, "cursor": cursor})


def test_cursor_survives_appends_in_this_process(layout: Layout) -> None:
    tool = SessionHistoryTool(layout)
    page = first_page(tool)
    HistoryStore(layout, durable=False).append([text_row("late needle", None, rid="late")])
    follow = next_page(tool, page["nextCursor"])
    assert follow["ok"], follow
    ids = [i["itemId"] for i in page["items"] + follow["items"]]
    assert ids == [str(s) for s in range(29, 19, -1)]  # in order, the new row not mixed in


def test_cursor_survives_append_by_another_process(layout: Layout) -> None:
    tool = SessionHistoryTool(layout)
    page = first_page(tool)
    code = (
        "import sys; from pathlib import Path; from segue._history import HistoryStore;"
        "from segue._messages import make_row; from segue._workspace import Layout;"
        "HistoryStore(Layout(Path(sys.argv[1]), 'cur')).append("
        "[make_row('user', 'other needle', id='o1')])"
    )
    subprocess.run([sys.executable, "-c", code, str(layout.home)], check=True)
    follow = next_page(tool, page["nextCursor"])
    assert follow["ok"], follow
    assert follow["items"][0]["itemId"] == "24"


def test_appended_manual_reset_hides_the_rest(layout: Layout) -> None:
    tool = SessionHistoryTool(layout)
    page = first_page(tool)
    # segue's store rotates on a reset (which expires cursors); a writer that appends the reset
    # in place and keeps the epoch is a verified append, so the page must find the new floor.
    receipt = read_receipt(layout)
    assert receipt is not None
    with open(layout.chat, "ab") as f:
        f.write(encode_row(manual_reset_row(row_id="clr", now_ms=1)) + b"\n")
    stamp_receipt(layout, receipt.epoch)
    follow = next_page(tool, page["nextCursor"])
    assert follow["ok"] and follow["items"] == [] and follow["nextCursor"] is None
    assert "reset" in follow["note"]


def test_reset_through_the_store_expires_cursors(layout: Layout) -> None:
    tool = SessionHistoryTool(layout)
    page = first_page(tool)
    HistoryStore(layout, durable=False).append([manual_reset_row(row_id="clr", now_ms=1)])
    assert next_page(tool, page["nextCursor"])["error"]["code"] == "stale_cursor"
    fresh = call(tool, {"action": "search", "query": "needle"})
    assert fresh["items"] == [] and fresh["nextCursor"] is None


def _rotate(layout: Layout) -> None:
    batch = rollover_batch(
        ids=("b", "l", "t"),
        rollover_id="r1",
        reason="on-send",
        new_window_id="w:30",
        previous_window_id="w:0",
        context_tokens=5,
        max_tokens=100,
        trigger=text_row("next", None, rid="trig"),
        now_ms=1,
    )
    HistoryStore(layout, durable=False).append(batch)


def _truncate(layout: Layout) -> None:
    data = layout.chat.read_bytes()
    cut = data.rstrip(b"\n").rfind(b"\n") + 1
    with open(layout.chat, "r+b") as f:
        f.truncate(cut)
    stamp_receipt(layout)  # a rewrite gets a new epoch (R29)


def _quarantine(layout: Layout) -> None:
    HistoryStore(layout, durable=False).quarantine("29")


def _untracked_append(layout: Layout) -> None:
    with open(layout.chat, "ab") as f:
        f.write(json.dumps({"id": "x", "role": "user", "parts": [], "metadata": {}}).encode())
        f.write(b"\n")


def _delete_receipt(layout: Layout) -> None:
    layout.receipt.unlink()


def _corrupt_receipt(layout: Layout) -> None:
    data = bytearray(layout.receipt.read_bytes())
    data[20] ^= 1
    layout.receipt.write_bytes(bytes(data))


CHANGES: dict[str, Callable[[Layout], None]] = {
    "rotation": _rotate,
    "truncation": _truncate,
    "quarantine": _quarantine,
    "untracked append": _untracked_append,
    "receipt deleted": _delete_receipt,
    "receipt corrupted": _corrupt_receipt,
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_cursor_expires(layout: Layout, change: str) -> None:
    tool = SessionHistoryTool(layout)
    page = first_page(tool)
    CHANGES[change](layout)
    follow = next_page(tool, page["nextCursor"])
    assert not follow["ok"]
    assert follow["error"]["code"] == "stale_cursor"
    fresh = call(tool, {"action": "search", "query": "needle", "limit": 5})
    assert fresh["ok"]  # a new query starts from a fresh baseline


def test_restart_expires_cursor(layout: Layout) -> None:
    tool = SessionHistoryTool(layout)
    cursor = first_page(tool)["nextCursor"]
    args = json.dumps({"action": "search", "query": "needle", "limit": 5, "cursor": cursor})
    out = subprocess.run(
        [sys.executable, "-m", "segue", "-w", "cur", "history", "tool", args],
        check=True,
        capture_output=True,
        env={**os.environ, "SEGUE_HOME": str(layout.home)},
    )
    answer = json.loads(out.stdout)
    assert answer["error"]["code"] == "stale_cursor"


def _flip(cursor: str, index: int) -> str:
    ch = cursor[index]
    return cursor[:index] + ("A" if ch != "A" else "B") + cursor[index + 1 :]


def test_tampered_cursor_is_invalid(layout: Layout) -> None:
    tool = SessionHistoryTool(layout)
    cursor = first_page(tool)["nextCursor"]
    process, payload, _tag = cursor.split(".")
    for bad in (
        _flip(cursor, len(process) + 10),
        _flip(cursor, len(cursor) - 5),
        cursor + "x",
        "garbage",
        f"{process}.{payload}",
    ):
        result = next_page(tool, bad)
        assert result["error"]["code"] == "invalid_cursor", (bad, result)


def test_foreign_workspace_action_or_query_is_invalid(layout: Layout) -> None:
    tool = SessionHistoryTool(layout)
    cursor = first_page(tool)["nextCursor"]
    other = Layout(layout.home, "other")
    HistoryStore(other, durable=False).append([text_row("needle", None, rid="z")])
    foreign = call(
        SessionHistoryTool(other), {"action": "search", "query": "needle", "cursor": cursor}
    )
    assert foreign["error"]["code"] == "invalid_cursor"
    assert (
        call(tool, {"action": "search", "query": "other", "cursor": cursor})["error"]["code"]
        == "invalid_cursor"
    )
    assert (
        call(tool, {"action": "list_windows", "cursor": cursor})["error"]["code"]
        == "invalid_cursor"
    )


def test_untrusted_receipt_first_page_then_no_growth(layout: Layout) -> None:
    layout.receipt.unlink()
    tool = SessionHistoryTool(layout)
    page = first_page(tool)  # proceeds from a fresh baseline
    assert next_page(tool, page["nextCursor"])["ok"]  # nothing changed: still valid
    HistoryStore(layout, durable=False).append([text_row("more", None, rid="m")])
    assert next_page(tool, page["nextCursor"])["error"]["code"] == "stale_cursor"


def test_lock_wait_is_bounded(layout: Layout) -> None:
    tool = SessionHistoryTool(layout, lock_timeout=0.2)
    ready = layout.home / "held"
    code = (
        "import sys, time; from pathlib import Path; from segue._history.lock import hold;"
        "p = Path(sys.argv[1])\n"
        "with hold(p, 5):\n"
        "    Path(sys.argv[2]).write_text('1')\n"
        "    sys.stdin.read()\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", code, str(layout.lock), str(ready)], stdin=subprocess.PIPE
    )
    try:
        while not ready.exists():
            assert holder.poll() is None
        result = call(tool, {"action": "list_windows"})
        assert result["error"]["code"] == "history_timeout"
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait()
