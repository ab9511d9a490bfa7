"""Lines over 1 MiB on the PostgreSQL store (SPEC.md's line constant): the store keeps them
without parsing them when they arrive, yet every view of them is the files' view. A person's
``history windows``, ``items``, ``read`` and ``export`` and the model's ``session_history``
(``list_windows``, ``list_items``, ``read_item`` with neighbours, words and literal search) give
the same answers on ``--store postgresql://…`` as on the JSONL files the store was migrated
from, with a long item, a long rollover boundary and a long reset (a floor) among the rows.
Only ``scanned``, what each backend read to answer, may differ."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pytest

from segue._context.rollover import boundary_row, manual_reset_row
from segue._history.store import HistoryStore
from segue._messages import with_metadata
from segue._workspace import Layout
from tests.postgres.test_people_words import _migrate, _run
from tests.retrieval.helpers import text_row

WS = "long"
_PAD = 600 << 10  # "x " this many times: 1.2 MB, over the 1 MiB line


def _history(home: Path, url: str, *, reset: bool) -> None:
    store = HistoryStore(Layout(home, WS), durable=False)
    store.append([text_row("needle before", None, rid="a")])
    store.append([text_row("long item " + "q " * _PAD, None, rid="L")])
    rollover = boundary_row(row_id="t-window-1", rollover_id="t-rollover-1", reason="on-send",
                            previous_window_id="w:0", context_tokens=150_000,
                            max_tokens=200_000, now_ms=1_700_000_000_001)
    store.append([with_metadata(rollover, pad="y " * _PAD),
                  text_row("needle in the second window", None, rid="b2")])
    if reset:
        store.append([with_metadata(manual_reset_row(row_id="big-reset", now_ms=1),
                                    pad="z " * _PAD),
                      text_row("needle after the reset", None, rid="c")])
    _migrate(home, WS, url)


def _tool(home: Path, call: Mapping[str, object], url: str | None) -> dict[str, object]:
    code, out = _run(home, WS, "history", "tool", json.dumps(call), url=url)
    assert code == 0, out
    answer: dict[str, object] = json.loads(out)
    answer.pop("scanned", None)  # what this backend read, not what it answers
    return answer


def _views(home: Path, url: str | None) -> list[object]:
    seen: list[object] = []
    code, out = _run(home, WS, "history", "windows", "--json", url=url)
    assert code == 0, out
    seen.append(out)
    ids: list[str] = []
    for window in json.loads(out)["windows"]:
        code, out = _run(home, WS, "history", "items", "--json", window["windowId"], url=url)
        assert code == 0, out
        seen.append(out)
        ids += [str(item["itemId"]) for item in json.loads(out)["items"]]
    assert len(ids) >= 3
    for item in ids:
        code, out = _run(home, WS, "history", "read", item, url=url)
        seen.append(("read", code, len(out), out[:200], out[-200:]))
    code, out = _run(home, WS, "history", "export", url=url)
    seen.append((code, len(out), out.count("needle")))
    windows = _tool(home, {"action": "list_windows"}, url)
    seen.append(windows)
    listed = windows["windows"]
    assert isinstance(listed, list) and listed
    for window in listed:
        seen.append(_tool(home, {"action": "list_items", "window_id": window["windowId"]}, url))
        seen.append(_tool(home, {"action": "read_item", "item_id": window["firstItemId"],
                                 "context": 3}, url))  # fmt: skip
    for call in ({"action": "search", "query": "needle"},
                 {"action": "search", "query": "long item", "match": "literal"},
                 {"action": "search", "query": "needle window", "order": "oldest"}):  # fmt: skip
        seen.append(_tool(home, call, url))
    return seen


@pytest.mark.parametrize("reset", [False, True], ids=["no-floor", "long-reset"])
def test_every_view_of_long_lines_is_the_files_view(
    pg_url: str, tmp_path: Path, reset: bool
) -> None:
    _history(tmp_path, pg_url, reset=reset)
    files, store = _views(tmp_path, None), _views(tmp_path, pg_url)
    assert len(files) == len(store) >= 12
    for mine, theirs in zip(files, store, strict=True):
        assert theirs == mine
    # it compared answers with hits in them, on both sides of each long line
    searched = files[-3]
    assert isinstance(searched, dict) and searched["items"]
    assert any(v[:2] == ("read", 0) and v[2] > 1 << 20 for v in files if isinstance(v, tuple))
