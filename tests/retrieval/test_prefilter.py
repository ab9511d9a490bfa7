"""The scan's byte pre-filter (R23, R24): skipping a line without parsing it never changes an
answer. Lines are spelled every way that matters to it: query letters raw, in either case or
as ``\\u00XX`` escapes; the letters ``re.IGNORECASE`` folds onto ASCII (K, ſ, İ, ı) raw or
escaped; compaction boundaries whose key is escaped; reset keys. Checked three ways: line by
line against the unfiltered classification, chunk by chunk (the readers' ``quiet`` and
``marker`` at any read edge) against the per-line test, and whole searches with and without
the filter."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from segue._context.floor import ESCAPE, mentions_reset_key
from segue._retrieval import SessionHistoryTool, pages, reader
from segue._retrieval.matching import make_prefilter, matcher
from segue._retrieval.project import Kind, classify
from segue._retrieval.reader import (
    BackState,
    BackwardReader,
    Budget,
    ForwardReader,
    FwdState,
    RawLine,
    Segment,
)
from segue._workspace import Layout
from tests.retrieval.helpers import pages as all_pages
from tests.retrieval.helpers import write_history

QUERIES = ["needle", "Needle r", "kiss", "sink", "is", "ki-ss", "boundary", "compaction", "Ω9"]


def _escape(ch: str, upper: bool) -> str:
    hexits = f"{ord(ch):04x}"
    return "\\u" + (hexits.upper() if upper else hexits)


@st.composite
def spelled(draw: st.DrawFn, word: str) -> str:
    """``word`` as JSON string content: each character raw, case-flipped or escaped."""
    out = ""
    for ch in word:
        how = draw(st.sampled_from(["raw", "raw", "flip", "escape"]))
        if how == "flip":
            out += ch.swapcase()
        elif how == "escape":
            out += _escape(ch, draw(st.booleans()))
        else:
            out += ch
    return out


FOLDING = ["\u212a", "\u017f", "\u0130", "\u0131"]


@st.composite
def fragment(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["word", "word", "fold", "fold-escaped", "plain"]))
    if kind == "word":
        return draw(spelled(draw(st.sampled_from(["needle", "kiss", "sink", "ki-ss", "is"]))))
    if kind == "fold":
        return draw(st.sampled_from(FOLDING))
    if kind == "fold-escaped":
        return _escape(draw(st.sampled_from(FOLDING)), draw(st.booleans()))
    return draw(st.sampled_from(["hay", " ", "r1", "\\n", "\\\\u", '\\"', "é"]))


@st.composite
def line(draw: st.DrawFn, i: int) -> bytes:
    """One transcript line (JSON written by hand, so escapes stay as drawn)."""
    text = "".join(draw(st.lists(fragment(), max_size=6)))
    seq = f'"historySequence":{i}'
    kind = draw(st.sampled_from(["text", "text", "text", "compaction", "reset", "tool", "raw"]))
    if kind == "compaction":
        key = draw(spelled("compactionBoundary")) if draw(st.booleans()) else "compactionBoundary"
        meta = f'"{key}":true,"compacted":true,"compactionEpoch":1,{seq}'
        return f'{{"id":"c{i}","role":"assistant","metadata":{{{meta}}},"parts":[]}}'.encode()
    if kind == "reset":
        key = draw(spelled("contextBoundaryKind")) if draw(st.booleans()) else "contextBoundaryKind"
        meta = f'"{key}":"reset",{seq}'
        return f'{{"id":"z{i}","role":"user","metadata":{{{meta}}},"parts":[]}}'.encode()
    if kind == "tool":
        part = (
            f'{{"type":"dynamic-tool","toolName":"bash","toolCallId":"t{i}",'
            f'"state":"output-available","input":{{"q":"{text}"}},"output":"ok"}}'
        )
        return f'{{"id":"t{i}","role":"assistant","metadata":{{{seq}}},"parts":[{part}]}}'.encode()
    if kind == "raw":
        return f"{text} not json".encode()  # a needle may start the line
    part = f'{{"type":"text","text":"{text} r{i}"}}'
    return f'{{"id":"u{i}","role":"user","metadata":{{{seq}}},"parts":[{part}]}}'.encode()


@st.composite
def lines(draw: st.DrawFn) -> list[bytes]:
    n = draw(st.integers(1, 12))
    return [draw(line(i)) for i in range(n)]


def _raw_line(raw: bytes) -> RawLine:
    return RawLine(0, len(raw) + 1, raw, mentions_reset_key(raw), True)


@given(lines(), st.sampled_from(QUERIES))
@settings(max_examples=300, deadline=None)
def test_a_skipped_line_holds_no_hit_and_no_boundary(raws: list[bytes], query: str) -> None:
    f = make_prefilter(query)
    find = matcher(query)
    for raw in raws:
        seen = classify(_raw_line(raw))
        if f is None or not f(raw) or mentions_reset_key(raw):
            continue
        assert seen.kind not in (Kind.BOUNDARY, Kind.FLOOR), raw
        if seen.kind is Kind.ITEM:
            assert seen.item is not None
            assert find(seen.item.text) is None, (raw, query)


def test_an_escaped_letter_or_boundary_key_is_never_skipped() -> None:
    """Pinned cases: the escape ``\\u00XX`` of a key letter, the escaped compaction key, and
    the escaped Kelvin sign all keep a line from being skipped."""
    f = make_prefilter("kiss")
    assert f is not None
    assert not f(b'{"parts":[{"type":"text","text":"\\u006biss"}]}')
    assert not f(b'{"parts":[{"type":"text","text":"\\u212aiss"}]}')
    assert not f(b'{"parts":[{"type":"text","text":"\\u212Aiss"}]}')
    assert not f('{"text":"\u212aiss"}'.encode())
    assert not f(b'{"metadata":{"compaction\\u0042oundary":true}}')
    assert not f(b'{"metadata":{"compactionBoundary":true}}')
    assert f(b'{"parts":[{"type":"text","text":"k\\nss \\\\u"}]}')
    assert make_prefilter("\u03a99") is None  # no letter run: every row is parsed


@given(lines(), st.sampled_from(QUERIES))
@settings(max_examples=200, deadline=None)
def test_hot_spots_mark_exactly_the_lines_the_filter_keeps(raws: list[bytes], query: str) -> None:
    f = make_prefilter(query)
    if f is None:
        return
    buf = b"\n".join(raws) + b"\n"
    spots = f.hot(buf, ESCAPE in buf)
    assert spots == sorted(spots)
    start = 0
    for raw in raws:
        end = start + len(raw)
        quiet = not any(start <= s < end for s in spots)
        assert quiet == f(raw), (raw, query)
        start = end + 1


@given(lines(), st.sampled_from(QUERIES), st.integers(1, 300), st.booleans())
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_readers_mark_quiet_and_marker_lines_at_any_read_edge(
    raws: list[bytes], query: str, chunk: int, torn: bool
) -> None:
    f = make_prefilter(query)
    if f is None:
        return
    data = b"\n".join(raws) + (b"" if torn else b"\n")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "chat.jsonl"
        path.write_bytes(data)
        segs = [Segment(path, 0, len(data))]
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(reader, "_CHUNK", chunk)
            big = Budget(1 << 40, 1 << 40)
            back = list(BackwardReader(segs, BackState(len(data)), big, f.hot))
            fwd = list(ForwardReader(segs, FwdState(0), Budget(1 << 40, 1 << 40), f.hot))
    assert _expanded(reversed(back), data) == raws == _expanded(fwd, data)
    for got in (*back, *fwd):
        assert got.raw is not None
        if got.quiet and got.raw == b"" and got.end - got.start > 1:  # a run of quiet lines
            assert not got.marker
            assert all(f(r) and not mentions_reset_key(r) for r in _split(data, got))
            continue
        assert got.marker == mentions_reset_key(got.raw)
        if got.quiet:  # a quiet line is one the filter skips (not every such line is quiet)
            assert f(got.raw)


def _split(data: bytes, line: RawLine) -> list[bytes]:
    return data[line.start : line.end].split(b"\n")[:-1]


def _expanded(lines: Any, data: bytes) -> list[bytes | None]:
    """The raw lines read, a quiet run standing for the lines it covers."""
    out: list[bytes | None] = []
    for ln in lines:
        run = ln.quiet and ln.raw == b"" and ln.end - ln.start > 1
        out.extend(_split(data, ln) if run else [ln.raw])
    return out


def _search_all(layout: Layout, args: dict[str, Any]) -> list[dict[str, Any]]:
    tool = SessionHistoryTool(layout, use_index=False, max_bytes=700, max_rows=5)
    out = []
    for page in all_pages(tool, args):
        out.append({k: v for k, v in page.items() if k not in ("scanned", "nextCursor")})
    return out


@given(lines(), st.sampled_from(QUERIES), st.sampled_from(["newest", "oldest"]))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_search_pages_are_the_same_without_the_filter(
    raws: list[bytes], query: str, order: str
) -> None:
    args = {"action": "search", "match": "literal", "query": query, "order": order, "limit": 3}
    with tempfile.TemporaryDirectory() as tmp:
        layout = Layout(Path(tmp), "ws")
        write_history(layout, raws[: len(raws) // 2], raws[len(raws) // 2 :])
        filtered = _search_all(layout, args)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(pages, "make_prefilter", lambda q: None)  # both orders ask pages
            unfiltered = _search_all(layout, args)
    assert filtered == unfiltered
