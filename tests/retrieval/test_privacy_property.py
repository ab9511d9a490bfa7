"""Property: over random histories, no answer of any action ever contains text written at or
before the newest floor (R11), answers stay within 16 KiB and the scan bounds (R24), and
paging finds every visible item exactly (nothing hidden by an empty page)."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from segue._context.rollover import quarantined
from segue._messages import Part, encode_row, make_row
from segue._retrieval import SessionHistoryTool
from segue._retrieval.envelope import serialize
from segue._workspace import Layout
from tests.conftest import scaled
from tests.retrieval.helpers import (
    MUTATIONS,
    entries,
    malformed_rollover,
    manual_reset,
    pages,
    rollover,
    text_row,
    write_history,
)

MARK = re.compile(r"MK(\d+)Z")

EVENT = st.one_of(
    st.tuples(st.just("text"), st.sampled_from(["user", "assistant", "system"])),
    st.tuples(st.just("tool"), st.sampled_from(["bash", "session_history"])),
    st.tuples(st.just("rollover"), st.just("")),
    st.tuples(st.just("reset"), st.just("")),
    st.tuples(st.just("malformed"), st.sampled_from(sorted(MUTATIONS))),
    st.tuples(st.just("reuse"), st.just("")),
    st.tuples(st.just("garbage"), st.sampled_from(["plain", "key"])),
    st.tuples(st.just("hidden"), st.sampled_from(["lead-in", "quarantined"])),
)
HUGE = st.sampled_from([None, "plain", "key"])


def build(
    events: list[tuple[str, str]], huge: str | None, huge_at: int
) -> tuple[list[bytes], set[int], set[int]]:
    """Lines, markers that may be shown, markers that must never be shown."""
    lines: list[bytes] = []
    owners: list[tuple[int | None, bool]] = []  # (marker, is a visible-kind item)
    floors: list[int] = []
    items = list(events)
    if huge is not None:
        items.insert(min(huge_at, len(items)), ("huge", huge))
    for n, (kind, arg) in enumerate(items):
        seq = n
        mk = f"MK{n}Z"
        visible_kind = False
        if kind == "text":
            line = encode_row(text_row(f"say {mk}", seq, role=arg))
            visible_kind = True
        elif kind == "tool":
            part = Part(
                type="dynamic-tool",
                toolName=arg,
                toolCallId=f"t{n}",
                state="output-available",
                input={"cmd": mk},
                output=f"out {mk}",
            )
            line = encode_row(
                make_row("assistant", id=f"r{n}", parts=[part], metadata={"historySequence": seq})
            )
            visible_kind = arg != "session_history"
        elif kind == "rollover":
            line = encode_row(rollover(seq))
        elif kind == "reset":
            line = encode_row(manual_reset(seq))
            floors.append(len(lines))
        elif kind == "malformed":
            line = malformed_rollover(seq, arg)
            floors.append(len(lines))
        elif kind == "reuse":
            line = encode_row(text_row(f"again {mk}", max(0, seq - 3), rid=f"dup{n}"))
            visible_kind = True
        elif kind == "garbage":
            key = b'"contextBoundaryKind":"reset",' if arg == "key" else b""
            line = b'{"id":"g' + str(n).encode() + b'",' + key + b'"text":"' + mk.encode() + b'"'
            if arg == "key":
                floors.append(len(lines))
        elif kind == "hidden":
            base = text_row(f"secret {mk}", seq)
            if arg == "lead-in":
                hidden = {**base.metadata, "synthetic": True, "uiVisible": False}
                line = encode_row(make_row("user", f"secret {mk}", id=f"l{n}", metadata=hidden))
            else:
                line = encode_row(quarantined(base))
        else:  # huge
            filler = "x" * (1 << 20)
            meta: dict[str, Any] = {"historySequence": seq}
            if arg == "key":
                meta["contextBoundaryKind"] = "reset"
                floors.append(len(lines))
            line = encode_row(make_row("user", f"{mk} {filler}", id=f"h{n}", metadata=meta))
        lines.append(line)
        owners.append((n, visible_kind))
    floor = floors[-1] if floors else -1
    visible = {mk for i, (mk, vis) in enumerate(owners) if vis and i > floor and mk is not None}
    forbidden = {mk for i, (mk, _vis) in enumerate(owners) if mk is not None} - visible
    return lines, visible, forbidden


def markers(result: dict[str, Any]) -> set[int]:
    return {int(m) for m in MARK.findall(serialize(result).decode("utf-8"))}


@settings(
    max_examples=scaled(150, 1500),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    events=st.lists(EVENT, min_size=0, max_size=40),
    split=st.integers(0, 40),
    huge=HUGE,
    huge_at=st.integers(0, 40),
    max_rows=st.integers(2, 60),
)
def test_nothing_before_the_floor_is_ever_returned(
    events: list[tuple[str, str]], split: int, huge: str | None, huge_at: int, max_rows: int
) -> None:
    lines, visible, forbidden = build(events, huge, huge_at)
    with tempfile.TemporaryDirectory() as tmp:
        layout = Layout(Path(tmp), "prop")
        cut = min(split, len(lines))
        write_history(layout, lines[:cut], lines[cut:])
        tool = SessionHistoryTool(layout, max_rows=max_rows)
        seen: set[int] = set()

        def check(result: dict[str, Any]) -> None:
            found = markers(result)
            assert not (found & forbidden), (found & forbidden, result)
            seen.update(found)

        windows = entries(tool, {"action": "list_windows"})
        for page in pages(tool, {"action": "list_windows"}):
            check(page)
        assert sum(w["items"] for w in windows) == len(visible)
        listed: set[int] = set()
        for window in windows:
            for page in pages(tool, {"action": "list_items", "window_id": window["windowId"]}):
                assert page["ok"], page
                check(page)
                listed |= markers(page)
        assert listed == visible
        hits: set[int] = set()
        item_ids: set[str] = set()
        for page in pages(tool, {"action": "search", "query": "mk"}):
            assert page["ok"], page
            check(page)
            hits |= markers(page)
            item_ids.update(i["itemId"] for i in page["items"])
        assert hits == visible
        for item in sorted(item_ids | {str(s) for s in range(len(lines))}):
            for page in pages(tool, {"action": "read_item", "item_id": item, "limit_chars": 50}):
                check(page)
                if not page["ok"]:
                    assert page["error"]["code"] == "item_not_found"
        assert seen <= visible
