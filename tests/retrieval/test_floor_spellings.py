"""R11: the floor is about bytes, not one spelling. Whatever way a reset row is written — JSON
escapes in the key, whitespace around the colon, any key order, a duplicate key, the wrong
role, array-shaped metadata, past the first MiB of a 3 MiB line or across any read edge, in a
line that cannot be decoded at all — no byte written before it comes back from
``session_history``, nothing crashes, and every answer stays within 16 KiB."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from segue._context.floor import EDGE, KeyWatch, is_floor_line, mentions_reset_key
from segue._history import HistoryStore
from segue._messages import decode_row, encode_row
from segue._retrieval import SessionHistoryTool
from segue._retrieval.envelope import MAX_RESULT, serialize
from segue._views.windows import window_summaries
from segue._workspace import Layout
from tests.conftest import scaled
from tests.retrieval.helpers import pages, text_row, write_history

KEY = "contextBoundaryKind"
OLD = re.compile(r"OLD\d+Q")
CHUNK = 1 << 16  # the readers' read size: edges fall at its multiples
BIG = 3 << 20


@st.composite
def key_token(draw: st.DrawFn) -> bytes:
    """The quoted key with any subset of its characters written as \\u00XX escapes."""
    out = b'"'
    for ch in KEY:
        if draw(st.booleans()):
            hexits = f"{ord(ch):04x}"
            if draw(st.booleans()):
                hexits = hexits.upper()
            out += b"\\u" + hexits.encode()
        else:
            out += ch.encode()
    return out + b'"'


WS = st.sampled_from([b"", b" ", b"\t", b"  \r ", b"\r"])


@st.composite
def reset_member(draw: st.DrawFn) -> bytes:
    """``"contextBoundaryKind": "reset"`` in some spelling, maybe duplicated."""
    member = draw(key_token()) + draw(WS) + b":" + draw(WS) + b'"reset"'
    dup = draw(st.sampled_from([None, "before", "after"]))
    other = b'"contextBoundaryKind":"none"'
    if dup == "before":
        return other + b"," + member
    if dup == "after":
        return member + b"," + other
    return member


@st.composite
def floor_line(draw: st.DrawFn) -> bytes:
    member = draw(reset_member())
    others = [b'"timestamp":5', b'"historySequence":100', b'"uiVisible":false']
    members = [*others[: draw(st.integers(0, 3))], member]
    members = draw(st.permutations(members))
    meta = b"{" + b",".join(members) + b"}"
    shape = draw(st.sampled_from(["row", "array-meta", "not-object", "bad-utf8", "deep"]))
    role = draw(st.sampled_from([b'"assistant"', b'"user"', b'"system"', b'"robot"', b"7"]))
    parts = b'[{"type":"text","text":"NEWFLOOR"}]' if draw(st.booleans()) else b"[]"
    if shape == "array-meta":
        meta = b"[" + meta + b"]"
    if shape == "deep":
        parts = b'[{"type":"text","x":' + b"[" * 10_000 + b"]" * 10_000 + b"}]"
    fields = [b'"id":"floor"', b'"role":' + role, b'"metadata":' + meta, b'"parts":' + parts]
    fields = draw(st.permutations(fields))
    line = b"{" + b",".join(fields) + b"}"
    if shape == "not-object":
        line = b"[" + line + b"]"
    if shape == "bad-utf8":
        line = line[:-1] + b',"junk":"\xff\xfe"}'
    return line


def old_rows(n: int) -> list[bytes]:
    return [encode_row(text_row(f"say OLD{i}Q", i)) for i in range(n)]


def new_rows(start: int, n: int) -> list[bytes]:
    return [encode_row(text_row(f"later NEW{i}", start + i)) for i in range(n)]


def answers(layout: Layout, max_rows: int = 500) -> list[dict[str, Any]]:
    tool = SessionHistoryTool(layout, max_rows=max_rows)
    out: list[dict[str, Any]] = []
    out.extend(pages(tool, {"action": "list_windows"}))
    windows = [w for page in out if page["ok"] for w in page["windows"]]
    for w in windows:
        out.extend(pages(tool, {"action": "list_items", "window_id": w["windowId"]}))
    for query in ("OLD", "say", "later", "Q"):
        out.extend(pages(tool, {"action": "search", "query": query}))
    for item in ("0", "1", "2", "100", "m:floor"):
        out.extend(pages(tool, {"action": "read_item", "item_id": item}))
    return out


def assert_floor_holds(layout: Layout, max_rows: int = 500) -> list[dict[str, Any]]:
    """No old byte, no answer over 16 KiB, and every item names its window (also where one
    window is larger than a page's scan budget)."""
    results = answers(layout, max_rows)
    for result in results:
        data = serialize(result)
        assert len(data) <= MAX_RESULT
        assert not OLD.search(data.decode("utf-8")), result
        if result["ok"]:
            for item in result.get("items", []):
                assert item["windowId"] is not None, result
    return results


def assert_tools_do_not_crash(layout: Layout) -> None:
    store = HistoryStore(layout, durable=False)
    store.verify()
    window_summaries(store.rows())


@settings(
    max_examples=scaled(120, 1200),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(line=floor_line(), before=st.integers(1, 4), after=st.integers(0, 3), split=st.booleans())
def test_every_spelling_of_a_reset_row_is_a_floor(
    line: bytes, before: int, after: int, split: bool
) -> None:
    assert b"\n" not in line
    with tempfile.TemporaryDirectory() as tmp:
        layout = Layout(Path(tmp), "fl")
        old = old_rows(before)
        newer = new_rows(200, after)
        if split:
            write_history(layout, old, [line, *newer])
        else:
            write_history(layout, [], [*old, line, *newer])
        results = assert_floor_holds(layout)
        hits = {m for r in results for m in re.findall(r"NEW\d+", serialize(r).decode())}
        assert hits == {f"NEW{i}" for i in range(after)}  # what is above the floor is found
        assert_tools_do_not_crash(layout)


def _big_line(filler_before: int, token: bytes) -> bytes:
    """A 3 MiB row whose metadata, holding the reset key, follows a big text part."""
    head = b'{"id":"big","role":"assistant","parts":[{"type":"text","text":"'
    head += b"y" * filler_before + b'"}],"metadata":{' + token + b':"reset","pad":"'
    return head + b"z" * max(0, BIG - len(head) - 3) + b'"}}'


EDGE_OFFSETS = st.builds(
    lambda k, d: max(0, k * CHUNK + d), st.integers(1, BIG // CHUNK - 1), st.integers(-140, 20)
)


@settings(
    max_examples=scaled(20, 200),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    at=st.one_of(st.integers(0, BIG - 4096), EDGE_OFFSETS),
    token=key_token(),
    before_in_archive=st.booleans(),
    max_rows=st.sampled_from([2, 500]),
)
def test_a_reset_key_anywhere_in_a_3_mib_line_is_a_floor(
    at: int, token: bytes, before_in_archive: bool, max_rows: int
) -> None:
    line = _big_line(at, token)
    with tempfile.TemporaryDirectory() as tmp:
        layout = Layout(Path(tmp), "big")
        old = old_rows(3)
        if before_in_archive:
            write_history(layout, old, [line, *new_rows(10, 2)])
        else:
            write_history(layout, [], [*old, line, *new_rows(10, 2)])
        assert_floor_holds(layout, max_rows)
        assert_tools_do_not_crash(layout)


# -- the recognizer itself ---------------------------------------------------------------------


@given(token=key_token(), pad_before=st.binary(max_size=300), pad_after=st.binary(max_size=300))
def test_recognizer_finds_every_spelling_split_at_every_edge(
    token: bytes, pad_before: bytes, pad_after: bytes
) -> None:
    data = pad_before.replace(b"\\", b"") + token + pad_after
    assert mentions_reset_key(data)
    for cut in range(1, len(data)):
        forward = KeyWatch(forward=True)
        forward.feed(data[:cut])
        assert forward.feed(data[cut:])
        backward = KeyWatch(forward=False)
        backward.feed(data[cut:])
        assert backward.feed(data[:cut])


def test_recognizer_keeps_enough_overlap_for_the_longest_spelling() -> None:
    longest = b'"' + b"".join(b"\\u%04X" % ord(c) for c in KEY) + b'"'
    assert len(longest) == EDGE + 1
    assert json.loads(b"{" + longest + b":1}") == {KEY: 1}
    watch = KeyWatch(forward=True)
    for byte in longest:
        watch.feed(bytes([byte]))
    assert watch.found


def test_text_that_talks_about_the_key_is_not_a_floor() -> None:
    row = text_row('the field "contextBoundaryKind" marks a reset', 1)
    raw = encode_row(row)
    assert not mentions_reset_key(raw)  # inside a string its quotes are escaped
    assert not is_floor_line(decode_row(raw), mentions_reset_key(raw))
    assert not mentions_reset_key(b'{"contextBoundaryKin":"reset"}')
    assert not mentions_reset_key(b'{"\\u0063ontextBoundaryKinds":"reset"}')


def test_a_duplicate_key_resolved_away_by_the_decoder_still_counts() -> None:
    raw = (
        b'{"id":"d","role":"assistant","parts":[],"metadata":'
        b'{"contextBoundaryKind":"reset","contextBoundaryKind":"none"}}'
    )
    row = decode_row(raw)
    assert row.metadata["contextBoundaryKind"] == "none"
    assert is_floor_line(row, mentions_reset_key(raw))


def test_search_hits_in_a_window_larger_than_a_page_name_their_window(tmp_path: Path) -> None:
    from tests.retrieval.helpers import entries, rollover

    layout = Layout(tmp_path, "wide")
    lines = [
        *old_rows(3),
        encode_row(rollover(3)),
        *[encode_row(text_row(f"needle {i}", 4 + i)) for i in range(40)],
    ]
    write_history(layout, [], lines)
    tool = SessionHistoryTool(layout, max_rows=5)
    hits = entries(tool, {"action": "search", "query": "needle", "limit": 7})
    assert sorted(int(h["itemId"]) for h in hits) == list(range(4, 44))
    assert {h["windowId"] for h in hits} == {"w:3"}


def test_read_item_in_a_window_larger_than_a_page_names_its_window(tmp_path: Path) -> None:
    from tests.retrieval.helpers import rollover

    layout = Layout(tmp_path, "deep")
    lines = [
        *old_rows(3),
        encode_row(rollover(3)),
        *[encode_row(text_row(f"needle {i}", 4 + i)) for i in range(40)],
    ]
    write_history(layout, [], lines)
    tool = SessionHistoryTool(layout, max_rows=5)
    for item in ("40", "20", "5"):
        read = list(pages(tool, {"action": "read_item", "item_id": item}))
        found = [i for p in read for i in p["items"]]
        assert [(i["itemId"], i["windowId"]) for i in found] == [(item, "w:3")]
        assert all(p["scanned"]["rows"] <= 5 for p in read)
