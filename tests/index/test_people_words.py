"""``segue history search --words`` answered by the history index (R35, R39): the very
listing the scan gives — the same hits, scores, order and snippets — without walking every
row. The scan is the reference; each comparison below asserts that it compared hits."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from segue._context.rollover import manual_reset_row
from segue._history.store import HistoryStore
from segue._messages import Part, Row, make_row, with_metadata
from segue._retrieval.index_file import index_path
from segue._workspace import Layout
from tests.cli.test_history_cli import segue
from tests.index.histories import Op, lines_of, ops
from tests.index.walks import counting, no_walk
from tests.retrieval.helpers import text_row, write_history

WS = "ws"
QUERIES = ["needle", "needle tail", "straße kelvin", "calls out", "command", "hay ne tail",
           "istanbul", "r1 r2 r3"]


def _words(home: Path, query: str) -> list[dict[str, object]]:
    result = segue(home, "history", "search", "--words", "--json", query, workspace=WS)
    assert result.exit_code in (0, 1), result.output
    items: list[dict[str, object]] = json.loads(result.stdout)["items"]
    assert result.exit_code == (0 if items else 1)
    return items


def _scanned(home: Path, layout: Layout, queries: list[str]) -> dict[str, list[dict[str, object]]]:
    """The scan's answers: the index file moved aside while they are asked."""
    path = index_path(layout)
    aside = path.with_name("aside.sqlite")
    shutil.move(path, aside)
    try:
        return {q: _words(home, q) for q in queries}
    finally:
        shutil.move(aside, path)


def _tool_row(i: int, command: str) -> Row:
    part = Part(type="dynamic-tool", toolName="bash", toolCallId=f"c{i}",
                input={"command": command}, state="output-available", output=f"ran {i}")
    return make_row("assistant", f"running step {i}", id=f"t{i}", parts=[part])


def _append(layout: Layout, rows: list[Row]) -> None:
    HistoryStore(layout, durable=False).append(rows)


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(history=st.lists(ops, min_size=1, max_size=14), split=st.integers(0, 14),
       tail=st.integers(0, 3))
def test_the_index_lists_what_the_scan_lists(
    tmp_path_factory: pytest.TempPathFactory, history: list[Op], split: int, tail: int
) -> None:
    """Generated histories (every kind of line the index tests know: tool calls, lead-ins,
    boundaries, floors, damaged and raw lines, replays), indexed, then rows appended that the
    index has not read: every query's listing is the scan's."""
    home = tmp_path_factory.mktemp("pw")
    layout = Layout(home, WS)
    lines = lines_of(history)
    write_history(layout, lines[:split], lines[split:])
    assert segue(home, "history", "reindex", workspace=WS).exit_code == 0
    _append(layout, [text_row(f"needle appended {k} tail", None, rid=f"late{k}")
                     for k in range(tail)] + [_tool_row(99, "grep -rn needle src")])
    scanned = _scanned(home, layout, QUERIES)
    assert scanned["needle"]  # the appended tool call's command holds it, at least
    with pytest.MonkeyPatch.context() as mp:
        no_walk(mp)
        for q in QUERIES:
            assert _words(home, q) == scanned[q], q


def test_people_text_the_agent_does_not_read_is_found(
    segue_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A person reads a tool call as its JSON input (``{"command": ...}``), the agent as the
    command typed: the word ``command`` is only in the people's text, and the index finds it;
    a text with a lone surrogate and a line longer than the index parses are read and ranked
    like the rest."""
    layout = Layout(segue_home, WS)
    huge = text_row("needle command " + "z " * (600 << 10), None, rid="huge")
    _append(layout, [text_row("plain words about a deploy", None, rid="p0")]
            + [_tool_row(i, f"ls -la dir{i}") for i in range(4)])
    _append(layout, [text_row("lone \ud800 surrogate command needle", None, rid="s1"), huge])
    _append(layout, [text_row("the command line needle", None, rid="p1")])
    assert segue(segue_home, "history", "reindex", workspace=WS).exit_code == 0
    scanned = _scanned(segue_home, layout, ["command", "needle command", "deploy"])
    texts = [str(h["text"]) for h in scanned["command"]]
    assert len(texts) == 7 and sum('"command":"ls -la' in t for t in texts) == 4, texts
    assert any("surrogate" in t for t in texts)
    assert any(t.startswith("needle command z") for t in texts)
    no_walk(monkeypatch)
    for q, want in scanned.items():
        assert _words(segue_home, q) == want, q


def test_an_index_that_miscounts_a_row_is_not_believed(
    segue_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The index records each row's number of terms; a candidate that has another number when
    it is read again makes the search scan, so the listing stays the scan's."""
    layout = Layout(segue_home, WS)
    _append(layout, [text_row(f"needle {'hay ' * i}tail", None, rid=f"n{i}") for i in range(6)])
    assert segue(segue_home, "history", "reindex", workspace=WS).exit_code == 0
    scanned = _scanned(segue_home, layout, ["needle"])
    assert len(scanned["needle"]) == 6
    conn = sqlite3.connect(index_path(layout))
    conn.execute("UPDATE rows SET plen = plen + 5 WHERE plen IS NOT NULL")
    conn.commit()
    conn.close()
    walks = counting(monkeypatch)
    assert _words(segue_home, "needle") == scanned["needle"]
    assert walks  # the scan answered


def test_lines_longer_than_the_index_reads_are_searched_in_their_windows(
    segue_home: Path,
) -> None:
    """The index records a line over 1 MiB without parsing it. People's searches, literal and
    words, read such a line themselves: an item that long is listed, and a reset that long
    (it opens a window the index never saw) makes them answer as the scan does, with the
    window each item is in."""
    layout = Layout(segue_home, WS)
    pad = "z " * (600 << 10)
    _append(layout, [text_row("needle before", None, rid="a"),
                     text_row(f"needle in a long item {pad}", None, rid="b")])
    reset = with_metadata(manual_reset_row(row_id="big-reset", now_ms=1), pad=pad)
    _append(layout, [reset, text_row("needle after the reset", None, rid="c")])
    assert segue(segue_home, "history", "reindex", workspace=WS).exit_code == 0
    _append(layout, [text_row(f"needle appended long {pad}", None, rid="d")])
    scanned = _scanned(segue_home, layout, ["needle"])["needle"]
    literal = _scanned_literal(segue_home, layout)
    assert len(scanned) == len(literal) == 4
    assert len({h["windowId"] for h in scanned}) == 2  # before and after the reset
    assert _words(segue_home, "needle") == scanned
    assert _literal(segue_home) == literal


def _literal(home: Path) -> list[dict[str, object]]:
    result = segue(home, "history", "search", "--json", "needle", workspace=WS)
    assert result.exit_code == 0, result.output
    items: list[dict[str, object]] = json.loads(result.stdout)["items"]
    return items


def _scanned_literal(home: Path, layout: Layout) -> list[dict[str, object]]:
    path = index_path(layout)
    aside = path.with_name("aside.sqlite")
    shutil.move(path, aside)
    try:
        return _literal(home)
    finally:
        shutil.move(aside, path)
