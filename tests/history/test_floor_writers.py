"""R11, exact both ways, through every writer that re-encodes or moves rows it did not create.

A generated line sits between a row holding ``SECRET`` and a row holding ``AFTER``. Its truth
is known from how it was built: a floor (the row's own ``metadata.contextBoundaryKind`` is
``"reset"``, however spelled; or a line that does not decode cleanly — duplicate keys,
undecodable, over 1 MiB — holding the key anywhere) or not (a clean line with the key or the
value nested anywhere else). After each writer (the bytes placed in ``chat.jsonl``,
``segue history import``, the in-memory store's import, rotation, recovery, an attempted
quarantine) the public tool must hide ``SECRET`` exactly when the line is a floor, and never
hide ``AFTER``."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from segue import HistoryStore, InMemoryStore, Layout, SessionHistoryTool
from segue._errors import StoreError
from tests.front import cli
from tests.retrieval.helpers import entries, rollover, stamp_receipt, write_history

KEY = "contextBoundaryKind"
SECRET = b'{"id":"a","role":"user","parts":[{"type":"text","text":"SECRET"}],"metadata":{}}'
AFTER = b'{"id":"z","role":"user","parts":[{"type":"text","text":"AFTER"}],"metadata":{}}'


@st.composite
def key(draw: st.DrawFn) -> bytes:
    """The quoted key, any of its characters as a ``\\u00XX`` escape (hex in either case)."""
    out = b'"'
    for ch in KEY:
        if draw(st.booleans()):
            hexits = f"{ord(ch):04x}"
            out += b"\\u" + (hexits.upper() if draw(st.booleans()) else hexits).encode()
        else:
            out += ch.encode()
    return out + b'"'


WS = st.sampled_from([b"", b" ", b"\t", b" \r "])


@st.composite
def member(draw: st.DrawFn, value: bytes = b'"reset"') -> bytes:
    return draw(key()) + draw(WS) + b":" + draw(WS) + value


def _row(draw: st.DrawFn, meta: bytes, parts: bytes, tail: bytes = b"") -> bytes:
    fields = [b'"id":"b"', b'"role":"assistant"', b'"metadata":' + meta, b'"parts":' + parts]
    return b"{" + b",".join(draw(st.permutations(fields))) + tail + b"}"


TOOL = b'[{"type":"dynamic-tool","toolName":"read","toolCallId":"c","state":"output-available",'


@st.composite
def floor_line(draw: st.DrawFn) -> bytes:
    """A line R11 makes a floor."""
    kind = draw(st.sampled_from(["own", "dup-meta", "dup-key", "dirty-nested", "undecodable"]))
    m = draw(member())
    others = draw(st.permutations([m, b'"timestamp":5', b'"uiVisible":false']))
    if kind == "own":
        return _row(draw, b"{" + b",".join(others) + b"}", b"[]")
    if kind == "dup-meta":  # the decoder keeps the last metadata, without the key
        return _row(draw, b"{" + m + b"}", b"[]", b',"metadata":{}')
    if kind == "dup-key":
        return _row(draw, b"{" + m + b"," + draw(member(b'"none"')) + b"}", b"[]")
    if kind == "dirty-nested":  # a duplicate key anywhere makes the bytes decide
        parts = TOOL + b'"input":{' + m + b',"k":1,"k":2},"output":"x"}]'
        return _row(draw, b"{}", parts)
    return draw(st.sampled_from([b"\xff", b"[", b"{"])) + b"{" + m + b"}"


@st.composite
def clean_line(draw: st.DrawFn) -> bytes:
    """A line that decodes cleanly with the key or value away from the row's own kind."""
    kind = draw(st.sampled_from(["tool-input", "tool-output", "other", "nested-meta", "text"]))
    m = draw(member())
    if kind == "tool-input":
        return _row(draw, b"{}", TOOL + b'"input":{' + m + b',"value":"tool facts"},"output":"x"}]')
    if kind == "tool-output":
        return _row(draw, b"{}", TOOL + b'"input":{},"output":{"rows":[{' + m + b"}]}}]")
    if kind == "other":
        return _row(draw, b"{" + draw(member(b'"normal"')) + b',"other":"reset"}', b"[]")
    if kind == "nested-meta":
        return _row(draw, b'{"x":{"y":{' + m + b"}}}", b"[]")
    text = json.dumps("{" + json.dumps(KEY) + ': "reset"}').encode()
    return _row(draw, b"{}", b'[{"type":"text","text":' + text + b"}]")


LINES = st.one_of(floor_line().map(lambda b: (b, True)), clean_line().map(lambda b: (b, False)))


def _texts(layout: Layout) -> set[str]:
    tool = SessionHistoryTool(layout)
    found: list[dict[str, Any]] = []
    for query in ("SECRET", "AFTER"):
        found += entries(tool, {"action": "search", "query": query})
    return {item["text"] for item in found}


def _check(layout: Layout, is_floor: bool, *, written: bool = True) -> None:
    texts = _texts(layout)
    if written:
        assert "AFTER" in texts  # the comparison saw something
    assert ("SECRET" in texts) is (written and not is_floor)


def _file(tmp: Path, line: bytes) -> Path:
    path = tmp / "in.jsonl"
    path.write_bytes(SECRET + b"\n" + line + b"\n" + AFTER + b"\n")
    return path


SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _tmp() -> Path:
    return Path(tempfile.mkdtemp(prefix="floor-writers-"))


@SETTINGS
@given(LINES)
def test_the_bytes_in_place_are_judged_exactly(case: Any) -> None:
    line, is_floor = case
    layout = Layout(_tmp(), "ws")
    write_history(layout, [], [SECRET, line, AFTER])
    _check(layout, is_floor)


@SETTINGS
@given(LINES)
def test_import_keeps_a_floor_a_floor(case: Any) -> None:
    line, is_floor = case
    home = _tmp()
    result = CliRunner().invoke(cli, ["--home", str(home), "-w", "ws", "history", "import",
                                      str(_file(home, line))])
    if result.exit_code != 0:  # refused: a one-line error, nothing written
        assert result.exception is None or isinstance(result.exception, SystemExit)
        assert "line 2" in result.output and "Traceback" not in result.output
        assert not (home / "sessions" / "ws" / "chat.jsonl").exists()
        return
    _check(Layout(home, "ws"), is_floor)


@SETTINGS
@given(LINES)
def test_the_in_memory_import_keeps_a_floor_a_floor(case: Any) -> None:
    line, is_floor = case
    store = InMemoryStore("ws")
    try:
        store.import_rows(SECRET + b"\n" + line + b"\n" + AFTER + b"\n")
    except Exception as exc:  # refused, naming the line
        message = str(exc)
        assert "line 2" in message
        return
    lines = list(store.lines())
    layout = Layout(_tmp(), "ws")
    archive = [ln.raw or b"" for ln in lines if ln.source == "archive"]
    chat = [ln.raw or b"" for ln in lines if ln.source == "chat"]
    write_history(layout, archive, chat)
    _check(layout, is_floor)


@SETTINGS
@given(LINES)
def test_rotation_recovery_and_quarantine_keep_a_floor(case: Any) -> None:
    line, is_floor = case
    layout = Layout(_tmp(), "ws")
    write_history(layout, [], [SECRET, line, AFTER])
    with open(layout.chat, "ab") as f:
        f.write(b'{"id":"torn"')  # a torn tail: recovery rewrites chat.jsonl
    store = HistoryStore(layout)
    store.recover()
    _check(layout, is_floor)
    try:
        store.quarantine("m:b")
    except StoreError as exc:
        code = exc.code
        assert code in ("not_quarantinable", "item_not_found")
    _check(layout, is_floor)
    store.append([rollover(100)])  # rotates every line before the boundary into the archive
    assert layout.archive.exists()
    _check(layout, is_floor)


@pytest.mark.parametrize("where", ["tool", "nested-meta"])
def test_an_oversized_line_is_a_floor_wherever_the_key_stands(tmp_path: Path, where: str) -> None:
    pad = "x" * (3 << 20)
    meta: dict[str, Any] = {}
    if where == "tool":
        parts = [{"type": "dynamic-tool", "toolName": "r", "toolCallId": "c",
                  "state": "output-available", "input": {KEY: "reset"}, "output": pad}]
    else:
        parts, meta = [{"type": "text", "text": pad}], {"x": {KEY: "reset"}}
    line = json.dumps({"id": "b", "role": "assistant", "parts": parts, "metadata": meta}).encode()
    layout = Layout(tmp_path, "ws")
    write_history(layout, [], [SECRET, line, AFTER])
    _check(layout, True)
    home = tmp_path / "imp"
    result = CliRunner().invoke(cli, ["--home", str(home), "-w", "ws", "history", "import",
                                      str(_file(tmp_path, line))])
    assert result.exit_code == 0, result.output
    _check(Layout(home, "ws"), True)


def test_the_issue_s_two_lines_keep_their_floor_on_import(tmp_path: Path) -> None:
    line = (b'{"id":"b","role":"assistant","parts":[],"metadata":{"contextBoundaryKind":"reset"},'
            b'"metadata":{}}')
    home = tmp_path / "h"
    result = CliRunner().invoke(cli, ["--home", str(home), "-w", "ws", "history", "import",
                                      str(_file(tmp_path, line))])
    assert result.exit_code == 0, result.output
    layout = Layout(home, "ws")
    _check(layout, True)
    windows = entries(SessionHistoryTool(layout), {"action": "list_windows"})
    assert [w["kind"] for w in windows] == ["reset"]
    stamp_receipt(layout)
    listing = CliRunner().invoke(cli, ["--home", str(home), "-w", "ws", "history", "windows"])
    assert "reset" in listing.output
