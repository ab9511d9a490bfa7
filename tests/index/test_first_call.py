"""The first look-back call on a short history without an index ranks the whole history
(R39), as every later call does — from the agent's tool, which builds the index in the
workspace, and from ``segue history tool``, which writes nothing there and builds one of its
own for the process. Without it the first call came from the bounded scan, which ranks only
the hits of the page it reads: on a history whose best answer is older than the newest ten
hits, that answer was missing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from segue._history.store import HistoryStore
from segue._messages import make_row
from segue._retrieval import SessionHistoryTool
from segue._workspace import Layout

pytestmark = pytest.mark.first_build

ROOT = Path(__file__).resolve().parents[2]
BEST = "the deploy failed: disk quota exceeded on the build runner"
QUERY = {"action": "search", "query": "deploy quota runner"}


def _history(home: Path) -> Layout:
    """The best answer first, then 30 newer items holding one of the words each."""
    layout = Layout(home, "ws")
    rows = [make_row("user", BEST, id="best")]
    rows += [make_row("assistant", f"deploy step {n} is queued", id=f"d{n}") for n in range(30)]
    HistoryStore(layout, durable=False).append(rows)
    return layout


def _listing(layout: Layout) -> list[str]:
    return sorted(p.name for p in layout.session_dir.iterdir())


def test_the_history_tool_command_ranks_a_short_history_whole_and_writes_nothing(
    tmp_path: Path,
) -> None:
    layout = _history(tmp_path / "home")
    before = _listing(layout)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    out = subprocess.run(
        [sys.executable, "-m", "segue", "--home", str(layout.home), "-w", "ws", "history",
         "tool", json.dumps(QUERY)],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "TMPDIR": str(scratch)},
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)
    assert answer["ok"], answer
    texts = [item["text"] for item in answer["items"]]
    assert texts[0] == BEST  # the oldest item, ranked over the whole history
    assert len(texts) == 10
    assert _listing(layout) == before  # nothing written in the workspace
    assert list(scratch.iterdir()) == []  # and its own index removed as the process ends


def test_the_agents_first_call_on_a_short_history_comes_from_the_index(tmp_path: Path) -> None:
    layout = _history(tmp_path / "home")
    tool = SessionHistoryTool(layout)
    answer = tool.call(QUERY)
    assert answer["ok"], answer
    assert answer["items"][0]["text"] == BEST
    assert tool.index_problem is None
    assert "history-index.sqlite" in _listing(layout)  # built in the workspace, kept
    again = SessionHistoryTool(layout, build_index=False).call(QUERY)
    assert [i["text"] for i in again["items"]] == [i["text"] for i in answer["items"]]
