"""Large histories: a target behind a 40 MB archive is reached by paging, in order, each call
within its bounds; lines over the per-call budget are crossed across calls."""

from __future__ import annotations

from pathlib import Path

from segue._messages import encode_row, make_row
from segue._retrieval import SessionHistoryTool
from segue._workspace import Layout
from tests.conftest import scaled
from tests.retrieval.helpers import (
    call,
    encoded,
    entries,
    pages,
    rollover,
    stamp_receipt,
    text_row,
    write_history,
)

ARCHIVE_MB = scaled(40, 200)


def _big_history(layout: Layout) -> int:
    """Rows of ~4 KiB, a rollover every 400 rows; the target is row 0. Returns the row count."""
    filler = "lorem ipsum dolor sit amet " * 150
    target = encoded([text_row("THE-TARGET is here", 0)])[0]
    layout.session_dir.mkdir(parents=True)
    seq = 1
    with open(layout.archive, "wb") as f:
        f.write(target + b"\n")
        size = 0
        while size < ARCHIVE_MB << 20:
            row = rollover(seq) if seq % 400 == 0 else text_row(f"{seq} {filler}", seq)
            line = encode_row(row) + b"\n"
            f.write(line)
            size += len(line)
            seq += 1
    chat = [rollover(seq), text_row("recent work", seq + 1)]
    layout.chat.write_bytes(b"".join(line + b"\n" for line in encoded(chat)))
    stamp_receipt(layout)
    return seq + 2


def test_target_behind_40mb_archive_is_reached_by_paging(segue_home: Path) -> None:
    layout = Layout(segue_home, "big")
    total = _big_history(layout)
    tool = SessionHistoryTool(layout, use_index=False)  # the bounded scan itself
    target = {"action": "search", "match": "literal", "query": "the-target"}
    result_pages = list(pages(tool, target))
    assert result_pages[-1]["nextCursor"] is None
    found = [i for p in result_pages for i in p["items"]]
    assert [i["itemId"] for i in found] == ["0"]
    assert found[0]["windowId"] == "w:0"
    assert len(result_pages) > 10  # really paged, every page in bounds (checked by call())
    assert all(p["items"] == [] and "note" in p for p in result_pages[:-1])
    scanned = sum(p["scanned"]["bytes"] for p in result_pages)
    assert scanned >= ARCHIVE_MB << 20
    # As few calls as the bounds allow: every page but the last used its whole budget (how
    # fast that is, bench/bench_retrieval.py measures against a raw read of the file).
    assert all(p["scanned"]["bytes"] == tool.max_bytes or p["scanned"]["rows"] == tool.max_rows
               for p in result_pages[:-1])
    # the same target by read_item (locate by paging) and windows listed in order
    read = list(pages(tool, {"action": "read_item", "item_id": "0"}))
    assert read[-1]["items"][0]["text"] == "THE-TARGET is here"
    windows = entries(tool, {"action": "list_windows", "limit": 50})
    ids = [w["windowId"] for w in windows]
    assert ids[-1] == "w:0" and ids[0] == f"w:{total - 2}"
    numbers = [int(w.removeprefix("w:")) for w in ids]
    assert numbers == sorted(numbers, reverse=True)


def test_line_longer_than_the_budget_is_crossed(segue_home: Path) -> None:
    layout = Layout(segue_home, "huge")
    huge = encode_row(make_row("user", "y" * (5 << 20), id="huge", metadata={"historySequence": 1}))
    lines = [*encoded([text_row("old needle", 0)]), huge, *encoded([text_row("new needle", 2)])]
    write_history(layout, lines, [])
    tool = SessionHistoryTool(layout, use_index=False)  # the bounded scan itself
    got = entries(tool, {"action": "search", "match": "literal", "query": "needle"})
    assert [i["itemId"] for i in got] == ["2", "0"]
    assert len(list(pages(tool, {"action": "search", "match": "literal", "query": "needle"}))) >= 3


def test_oversized_line_with_reset_key_is_a_floor(segue_home: Path) -> None:
    layout = Layout(segue_home, "hugefloor")
    huge = encode_row(
        make_row(
            "user",
            "z" * (3 << 20),
            id="h",
            metadata={"historySequence": 1, "contextBoundaryKind": "reset"},
        )
    )
    lines = [*encoded([text_row("hidden needle", 0)]), huge, *encoded([text_row("seen needle", 2)])]
    write_history(layout, [], lines)
    tool = SessionHistoryTool(layout, use_index=False)  # the bounded scan itself
    got = entries(tool, {"action": "search", "match": "literal", "query": "needle"})
    assert [i["text"] for i in got] == ["seen needle"]
    windows = entries(tool, {"action": "list_windows"})
    assert [w["kind"] for w in windows] == ["reset"]
    first = call(tool, {"action": "read_item", "item_id": "0"})
    assert first["ok"] and first["items"] == [] and first["nextCursor"]  # still crossing it
    last = list(pages(tool, {"action": "read_item", "item_id": "0"}))[-1]
    assert last["error"]["code"] == "item_not_found"
