"""A catch-up tokenizes only the lines whose tokens the index does not hold yet, as far as
this process knows (``index_build._Known``); that memory must never cost an answer: new
tokens are found after any sequence of rebuilds and catch-ups, and an older copy of the
index put back in place (the same file name, fewer tokens) is caught up in full."""

from __future__ import annotations

import shutil
from pathlib import Path

from segue._history.store import HistoryStore
from segue._retrieval import SessionHistoryTool
from segue._retrieval.index_build import rebuild
from segue._retrieval.index_file import index_path
from segue._workspace import Layout
from tests.retrieval.helpers import encoded, entries, text_row, write_history


def _search(layout: Layout, query: str) -> list[str]:
    tool = SessionHistoryTool(layout)
    got = entries(tool, {"action": "search", "match": "literal", "query": query})
    assert tool.index_problem is None
    want = entries(SessionHistoryTool(layout, use_index=False),
                   {"action": "search", "match": "literal", "query": query})  # fmt: skip
    assert got == want
    return [str(i["text"]).split("\n")[-1] for i in got]


def _append(layout: Layout, text: str, seq: int) -> None:
    HistoryStore(layout, durable=False).append([text_row(text, seq)])


def test_new_tokens_are_found_after_rebuilds_and_catch_ups(tmp_path: Path) -> None:
    layout = Layout(tmp_path, "ws")
    write_history(layout, [], encoded([text_row("common words here", i) for i in range(5)]))
    rebuild(layout)
    _append(layout, "common words here\nfreshtoken-alpha", 5)  # a known line, a new one
    assert _search(layout, "tokEN-alp") == ["freshtoken-alpha"]
    _append(layout, "common words here\nanother-betaword", 6)
    assert _search(layout, "betaw") == ["another-betaword"]
    rebuild(layout)  # a new file: what was known of the last one does not count
    _append(layout, "common words here\ngammaword-three", 7)
    assert _search(layout, "maword-th") == ["gammaword-three"]


def test_an_older_copy_of_the_index_put_back_is_caught_up_in_full(tmp_path: Path) -> None:
    layout = Layout(tmp_path, "ws")
    write_history(layout, [], encoded([text_row("plain row", i) for i in range(5)]))
    rebuild(layout)
    old = tmp_path / "old.sqlite"
    shutil.copyfile(index_path(layout), old)
    _append(layout, "plain row\nzebraword-one", 5)
    assert _search(layout, "braword-on") == ["zebraword-one"]  # this process now knows that line
    shutil.copyfile(old, index_path(layout))  # the same file name, without that line
    _append(layout, "plain row\nother-thing", 6)  # the put-back copy re-reads row 5
    assert _search(layout, "braword-on") == ["zebraword-one"]
