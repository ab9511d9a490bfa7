"""The bounded scan ranks what it reads, not only the first hits it meets (R39): without a
trusted index, a words search gathers the hits of the page it reads, answers the best
``limit`` of them and keeps the rest, best first, for the next calls; a cursor then returns
every hit once. Through the public tool, with the index switched off."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from segue import SessionHistoryTool
from segue._messages import encode_row
from segue._workspace import Layout
from tests.retrieval.helpers import call, entries, rollover, text_row, write_history

QUERY = "flaky websocket reconnect timeout"
#: words of the same length as the query's, so rows differ only in how many query words
#: they hold (BM25's length part is then the same for all)
FILL = ["parser", "vendor", "bucket", "sprite", "gadget", "ribbon", "magnet", "pillow"]


def _row(n: int, words: int) -> str:
    """Row ``n`` holding the first ``words`` of the query's words and filler to 8 words."""
    held = QUERY.split()[:words]
    return " ".join([*held, *FILL[: 8 - len(held)], f"n{n}"])


def _scan(tmp_path: Path, texts: list[str]) -> SessionHistoryTool:
    layout = Layout(tmp_path, "ws")
    rows = [encode_row(text_row(t, i)) for i, t in enumerate(texts)]
    write_history(layout, [], rows)
    return SessionHistoryTool(layout, use_index=False)


def _texts(tool: SessionHistoryTool, page: dict[str, Any]) -> list[str]:
    assert page["ok"], page
    return [str(i["text"]) for i in page["items"]]


def test_the_best_hit_comes_first_though_fifty_newer_hits_hold_fewer_words(
    tmp_path: Path,
) -> None:
    # the oldest row holds all four words; the 50 newer ones one word each
    texts = [_row(0, 4), *(_row(n, 1) for n in range(1, 51))]
    tool = _scan(tmp_path, texts)
    page = call(tool, {"action": "search", "query": QUERY})
    got = _texts(tool, page)
    assert len(got) == 10
    assert got[0].startswith(QUERY), got[:3]


def test_a_cursor_returns_every_hit_once_best_first_within_the_page(tmp_path: Path) -> None:
    # 80 hits, newest first holding 1, 2, 3, 4 of the words in turn, and rows without any
    texts = []
    for n in range(80):
        texts.append(_row(n, 1 + n % 4))
        texts.append(" ".join([*FILL, f"m{n}"]))
    tool = _scan(tmp_path, texts)
    args = {"action": "search", "query": QUERY, "limit": 7}
    got: list[str] = []
    page = call(tool, args)
    calls = 1
    got += _texts(tool, page)
    while page["nextCursor"] is not None:
        page = call(tool, {**args, "cursor": page["nextCursor"]})
        got += _texts(tool, page)
        calls += 1
    assert calls >= 12  # 80 hits, 7 a call
    assert sorted(got) == sorted(t for t in texts if not t.startswith("parser"))
    # all 80 were read by the first page (well within its bounds): best first throughout
    held = [sum(w in t.split() for w in QUERY.split()) for t in got]
    assert held == sorted(held, reverse=True), held
    assert held[0] == 4 and held[-1] == 1


def test_held_hits_name_their_window(tmp_path: Path) -> None:
    """Hits ranked on one page and returned on later ones carry the window they are in."""
    layout = Layout(tmp_path, "ws")
    rows = [encode_row(text_row(_row(n, 1 + n % 4), n)) for n in range(30)]
    rows.insert(15, encode_row(rollover(1000)))
    write_history(layout, [], rows)
    tool = SessionHistoryTool(layout, use_index=False)
    windows = [w["windowId"] for w in entries(tool, {"action": "list_windows"})]
    assert len(windows) == 2
    found = entries(tool, {"action": "search", "query": QUERY, "limit": 4})
    assert len(found) == 30
    by_window = dict.fromkeys(windows, 0)
    for item in found:
        by_window[str(item["windowId"])] += 1
    assert sorted(by_window.values()) == [15, 15], by_window


def test_many_live_ranked_cursors_stay_bounded_oldest_first(tmp_path: Path) -> None:
    """Each ranked scan cursor keeps its page's other hits; past a bound on what all live
    cursors keep, the oldest expire (``stale_cursor``) and the newest still page on."""
    texts = [f"{_row(n, 1 + n % 4)} {'context ' * 60}" for n in range(220)]
    tool = _scan(tmp_path, texts)
    args = {"action": "search", "query": QUERY, "limit": 5}
    cursors = []
    for _ in range(240):
        page = call(tool, args)
        assert page["nextCursor"] is not None
        cursors.append(page["nextCursor"])
    oldest = tool.call({**args, "cursor": cursors[0]})
    assert not oldest["ok"] and oldest["error"]["code"] == "stale_cursor", oldest
    newest = tool.call({**args, "cursor": cursors[-1]})
    assert newest["ok"] and len(newest["items"]) == 5, newest
