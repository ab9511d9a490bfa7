"""Cursors that carry ids taken from the files (list_windows: the first and last item of the
window being accumulated; read_item: the item's window id). Row ids are foreign data: a lone
surrogate (a ``\\ud800`` escape a JavaScript writer can leave) or characters that serialize
to several bytes each must neither crash the tool nor make a cursor that the next call
refuses or that pushes the result past 16 KiB (R24, R26)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from segue._messages import encode_row, row_to_obj
from segue._retrieval import SessionHistoryTool
from segue._retrieval.cursor import MAX_CURSOR, CursorState, encode
from segue._retrieval.envelope import CURSOR_RESERVE
from segue._retrieval.project import MAX_ITEM_ID
from segue._workspace import Layout
from tests.retrieval.helpers import entries, pages, rollover, text_row, write_history


def _line(obj: dict[str, Any]) -> bytes:
    # ensure_ascii keeps a lone surrogate as the escape a JavaScript writer leaves on disk
    return json.dumps(obj, separators=(",", ":")).encode("ascii")


def _unsequenced(obj: dict[str, Any], row_id: str) -> dict[str, Any]:
    obj["metadata"].pop("historySequence", None)
    obj["id"] = row_id
    return obj


def test_lone_surrogate_ids_in_cursors(segue_home: Path) -> None:
    layout = Layout(segue_home, "sur")
    boundary = _unsequenced(row_to_obj(rollover(1)), "\ud800bnd")
    notes = [
        _unsequenced(row_to_obj(text_row(f"note {i}", None)), f"\udc00it{i}") for i in range(3)
    ]
    lines = [
        encode_row(text_row("root", 0)),
        _line(boundary),
        encode_row(text_row("x" * 20_000, 9)),  # paged by read_item inside that window
        *(_line(o) for o in notes),
        encode_row(rollover(8)),
    ]
    write_history(layout, [], lines)
    tool = SessionHistoryTool(layout)

    read = list(pages(tool, {"action": "read_item", "item_id": "9", "limit_chars": 5000}))
    assert all(p["ok"] for p in read), read[-1]
    assert "".join(p["items"][0]["text"] for p in read) == "x" * 20_000
    assert {p["items"][0]["windowId"] for p in read} == {"w:m:\ud800bnd"}

    windows = entries(tool, {"action": "list_windows", "limit": 1})
    assert [(w["windowId"], w["items"]) for w in windows] == [
        ("w:8", 0),
        ("w:m:\ud800bnd", 4),
        ("w:0", 1),
    ]
    assert windows[1]["firstItemId"] == "9"
    assert windows[1]["lastItemId"] == "m:\udc00it2"


def _window_pages(tool: SessionHistoryTool, limit: int) -> list[dict[str, Any]]:
    out = []
    for page in pages(tool, {"action": "list_windows", "limit": limit}):
        assert page["ok"], page
        if page["nextCursor"] is not None:
            assert len(page["nextCursor"]) <= MAX_CURSOR
        out.append(page)
    return out


def test_ids_that_serialize_large_keep_cursors_in_bounds(segue_home: Path) -> None:
    """Ids of up to 256 code points that cost 4 or 6 bytes each in JSON: a window's first and
    last ids and a read_item window id ride in the cursor, which must stay usable and leave
    the result within 16 KiB. An id is addressable only while its serialized form fits the
    256 bytes an id may take; longer ones are not items (the rows stay in the transcript)."""
    layout = Layout(segue_home, "big-ids")
    lines: list[bytes] = []
    short: set[str] = set()
    for w, ch in enumerate(["\x01", "\U0001d11e"] * 6):
        fits = 41 if ch == "\x01" else 62  # "m:" + these + 3 digits serializes to <= 256 bytes
        boundary = _unsequenced(row_to_obj(rollover(0)), f"{ch * 250}b{w:03d}")
        lines.append(_line(boundary) if ch == "\x01" else encode_row(rollover(1000 + w)))
        for k in range(4):
            row = _unsequenced(row_to_obj(text_row(f"w{w} k{k} " + "y" * 3000, None)), "")
            long = k in (0, 3)  # the window's first and last items, which a cursor carries
            row["id"] = f"{ch * (250 if long else fits)}{w:02d}{k}"
            if not long:
                short.add(f"m:{row['id']}")
            lines.append(json.dumps(row, separators=(",", ":"), ensure_ascii=False).encode())
    write_history(layout, [], lines)
    tool = SessionHistoryTool(layout)
    for limit in (1, 50):
        windows = [w for p in _window_pages(tool, limit) for w in p["windows"]]
        assert len(windows) == 13  # 12 boundaries and the (empty) root window
        assert sum(w["items"] for w in windows) == len(short)
    listed: set[str] = set()
    for window in windows:
        for page in pages(tool, {"action": "list_items", "window_id": window["windowId"]}):
            assert page["ok"], page
            listed.update(item["itemId"] for item in page["items"])
    assert listed == short
    for item_id in sorted(short):
        got = list(pages(tool, {"action": "read_item", "item_id": item_id, "limit_chars": 1000}))
        assert all(p["ok"] for p in got), got[-1]
        assert all(len(p["nextCursor"] or "") <= MAX_CURSOR for p in got)
        assert len(got) == 4  # 3006 characters in pages of 1000


def test_largest_cursor_fits_its_reserve() -> None:
    """Every field at its largest: ids at the byte bound (6-byte escapes), 64-bit numbers."""
    big = 2**63 - 1
    stamp = (big, big, big, big, big)
    worst_id = "\x01" * (MAX_ITEM_ID // 6)
    state = CursorState(
        ws="w" * 64, act="list_windows", bind="b" * 32, trusted=True, ep="e" * 32,
        chat=stamp, arc=stamp, asz=big, csz=big, ce=big, cs=big, cm=True, phase="back",
        pos=big, skip=big, skip_marker=True, first=worst_id, last=worst_id, count=big,
        end=big, window="w:" + worst_id, offset=big,
    )
    cursor = encode(state)
    assert len(cursor) <= min(CURSOR_RESERVE, MAX_CURSOR)
