"""Real processes: writers appending while readers look back through the index, and
``kill -9`` of a process in the middle of catching the index up and of rebuilding it. After
each: no wrong answer, the index trusted again, ``verify`` clean."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from segue._context.boundaries import ROOT_WINDOW_ID
from segue._history.store import HistoryStore
from segue._messages import make_row
from segue._retrieval import SessionHistoryTool
from segue._retrieval.index_build import rebuild
from segue._retrieval.index_file import build_path, index_path
from segue._retrieval.index_people import check_index
from segue._retrieval.project import Kind, classify
from segue._retrieval.reader import RawLine
from segue._workspace import Layout
from tests.conftest import scaled
from tests.retrieval.helpers import entries

#: a literal search (R23), the default before words search (R39)
LITERAL: dict[str, Any] = {"action": "search", "match": "literal"}

ROOT = Path(__file__).resolve().parents[2]


def _truth(layout: Layout) -> dict[str, tuple[str, str, str]]:
    """item id -> (projected text, window id, role), from the transcript itself."""
    out: dict[str, tuple[str, str, str]] = {}
    window = ROOT_WINDOW_ID
    for line in HistoryStore(layout).lines():
        seen = classify(RawLine(0, line.length, line.raw, line.reset_marker, True))
        if seen.kind in (Kind.BOUNDARY, Kind.FLOOR) and seen.window_id is not None:
            window = seen.window_id
        elif seen.kind is Kind.ITEM and seen.item is not None:
            out[seen.item.item_id] = (seen.item.text, window, seen.item.role)
    return out


def _clean(layout: Layout) -> None:
    assert HistoryStore(layout).verify().ok
    check = check_index(layout)
    assert check.state == "checked", check
    assert check.mismatches == ()


def _check_item(truth: dict[str, tuple[str, str, str]], item: dict[str, Any]) -> None:
    text, window, role = truth[item["itemId"]]
    assert item["windowId"] == window, item
    assert item["role"] == role
    assert item["text"].strip("…") in text, item


def test_four_writers_and_two_readers(segue_home: Path) -> None:
    layout = Layout(segue_home, "ws")
    batches = scaled(60, 400)
    writers = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.history.writer",
                str(segue_home),
                "ws",
                f"w{i}",
                str(batches),
                "25" if i == 0 else "0",
            ],
            cwd=ROOT,
        )
        for i in range(4)
    ]
    outs = [segue_home / f"reader-{i}.jsonl" for i in range(2)]
    readers = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.index.reader",
                str(segue_home),
                "ws",
                str(out),
                str(scaled(60, 300)),
            ],
            cwd=ROOT,
        )
        for out in outs
    ]
    for proc in writers + readers:
        assert proc.wait(timeout=600) == 0
    truth = _truth(layout)
    answered = indexed = 0
    for out in outs:
        for line in out.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            answer = record["answer"]
            if not answer["ok"]:
                assert answer["error"]["code"] in (
                    "history_timeout",
                    "history_changed",
                    "item_not_found",
                ), answer
                continue
            answered += 1
            indexed += record["index"] is None
            for item in answer.get("items", []):
                _check_item(truth, item)
    assert answered > 0 and indexed > 0, "the readers never answered from the index"
    tool = SessionHistoryTool(layout)
    want = entries(
        SessionHistoryTool(layout, use_index=False), {**LITERAL, "query": "row"}
    )
    assert entries(tool, {"action": "search", "match": "literal", "query": "row"}) == want
    entries(tool, {"action": "search", "match": "literal", "query": "row"})
    assert tool.index_problem is None
    _clean(layout)


def _rows(tag: str, n: int) -> list[Any]:
    return [
        make_row("user", f"needle {tag} {i} " + "lorem ipsum " * 60, id=f"{tag}-{i}")
        for i in range(n)
    ]


def _fill(layout: Layout, tag: str, batches: int) -> None:
    store = HistoryStore(layout, durable=False)
    for b in range(batches):
        store.append(_rows(f"{tag}{b}", 500))


def _wait(proc: subprocess.Popen[bytes], ready: Any, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ready():
            return
        assert proc.poll() is None, "the process ended before the moment to kill it"
        time.sleep(0.001)
    raise AssertionError("the moment to kill never came")


def _segue(home: Path, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "segue", "--home", str(home), "-w", "ws", *args],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _answers_like_the_scan(layout: Layout) -> None:
    scan = SessionHistoryTool(layout, use_index=False)
    tool = SessionHistoryTool(layout)
    for args in (
        {"action": "search", "match": "literal", "query": "needle b3 7 l"},
        {"action": "list_windows"},
        {"action": "read_item", "item_id": "7"},
    ):
        assert entries(tool, args) == entries(scan, args)
    entries(tool, {"action": "search", "match": "literal", "query": "needle a1 5 l"})
    assert tool.index_problem is None


def test_kill_during_catch_up(segue_home: Path) -> None:
    layout = Layout(segue_home, "ws")
    _fill(layout, "a", 2)
    rebuild(layout)
    _fill(layout, "b", scaled(8, 40))  # verified appends the index has not read
    journal = Path(str(index_path(layout)) + "-journal")
    # A process that answers as the agent does (and so catches the index up): the
    # `segue history tool` command is a reader that never writes the index.
    code = (
        "import sys; from pathlib import Path; from segue._workspace import Layout; "
        "from segue._retrieval.tool import SessionHistoryTool; "
        "SessionHistoryTool(Layout(Path(sys.argv[1]), 'ws')).call("
        "{'action': 'search', 'match': 'literal', 'query': 'needle'})"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(segue_home)],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    _wait(proc, journal.exists)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert journal.exists(), "the kill did not land inside the catch-up transaction"
    _answers_like_the_scan(layout)
    _clean(layout)


def test_kill_during_rebuild(segue_home: Path) -> None:
    layout = Layout(segue_home, "ws")
    _fill(layout, "a", scaled(8, 40))
    build = build_path(layout)
    proc = _segue(segue_home, "history", "reindex")
    _wait(proc, lambda: build.exists() and build.stat().st_size > 256 << 10)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not index_path(layout).exists()  # a half-built index never takes the place
    assert build.exists()
    _answers_like_the_scan(layout)  # the first call scans and rebuilds
    assert not build.exists()
    _clean(layout)
