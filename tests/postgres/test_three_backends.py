"""Property: the three look-back backends behind the one ``session_history`` tool — the
bounded scan of the JSONL files, the SQLite history index, and PostgreSQL — answer the same
generated histories and calls alike: every action, both orders, the R36 filters, floors of
every kind, hidden and quarantined rows, reused sequences, tool calls (R11, R23-R27, R35,
R36, R39). Pages may be cut differently (the scan stops at its 2 MiB / 500-row bound, an
index page does not), so what is compared is everything a query returns, paged to its end."""

from __future__ import annotations

import json
import tempfile
import uuid
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from segue._history.store import HistoryStore
from segue._retrieval.backends import lookback_tool, pick_backend
from segue._retrieval.backends.scan import ScanBackend
from segue._retrieval.backends.sqlite_index import IndexBackend
from segue._retrieval.index_build import rebuild
from segue._retrieval.tool import SessionHistoryTool
from segue._workspace import Layout
from segue.postgres._backend import PostgresBackend
from segue.postgres._store import PostgresStore
from tests.conftest import scaled
from tests.postgres.test_tool_equivalence import CALL, EVENT, _key, _url, line_of
from tests.retrieval.helpers import write_history

_SETTINGS = settings(
    max_examples=scaled(40, 400),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
def _entries(answer: dict[str, Any]) -> list[Any]:
    return list(answer.get("windows") or answer.get("items") or [])


def _all(tool: SessionHistoryTool, args: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """Every entry of a query, paged to its end, and its last answer (without cursor and
    ``scanned``, which differ by backend)."""
    got: list[Any] = []
    answer = tool.call(args)
    for _ in range(400):
        got += _entries(answer)
        if "item" in answer:
            got.append(answer["item"])
        if not answer.get("ok") or not answer.get("nextCursor"):
            last = {k: v for k, v in answer.items()
                    if k not in ("nextCursor", "scanned", "note", "items", "windows", "item")}
            return got, last
        answer = tool.call({**args, "cursor": answer["nextCursor"]})
    raise AssertionError("paging did not end")


def _physical(lines: list[bytes]) -> list[bytes]:
    return [piece for line in lines for piece in line.split(b"\n")]


class Three:
    def __init__(self, root: Path, events: list[tuple[str, str, str]], split: int) -> None:
        ws = "t" + uuid.uuid4().hex[:10]
        self.layout = Layout(root, ws)
        lines = [line_of(n, e) for n, e in enumerate(events)]
        write_history(self.layout, lines[:split], lines[split:])
        disk = HistoryStore(self.layout)
        disk.recover()
        rebuild(self.layout)
        self.pg = PostgresStore(_url(), ws)
        # the lines as the files hold them: a generated line with a raw newline in it is
        # two lines on disk (as ``history migrate`` would read them)
        self.pg.load_lines(
            [*(("archive", x) for x in _physical(lines[:split])),
             *(("chat", x) for x in _physical(lines[split:]))],
            disk.next_sequence(),
        )
        self.tools = {
            "scan": SessionHistoryTool.over(pick_backend(self.layout, None, use_index=False)),
            "index": lookback_tool(self.layout, None),
            "postgres": lookback_tool(self.layout, self.pg),
        }

    def ids(self) -> dict[str, list[str]]:
        tool = self.tools["scan"]
        windows = [w["windowId"] for w in _all(tool, {"action": "list_windows"})[0]]
        items: list[str] = []
        for wid in windows[:3]:
            items += [i["itemId"] for i in _all(tool, {"action": "list_items",
                                                        "window_id": wid})[0]]
        return {"windows": windows or ["w:0"], "items": items}


def test_the_one_function_picks_each_backend(tmp_path: Path) -> None:
    three = Three(tmp_path, [("text", "user", "needle")], 0)
    try:
        kinds = {name: type(tool.backend) for name, tool in three.tools.items()}
        assert kinds == {"scan": ScanBackend, "index": IndexBackend, "postgres": PostgresBackend}
    finally:
        three.pg.close()


def _same(args: dict[str, Any], got: tuple[list[Any], dict[str, Any]]) -> Any:
    """What must be equal: everything, in order — except a relevance search, whose order
    is each backend's own (the scan ranks within each page it reads, R39): the same items."""
    entries, last = got
    if args["action"] == "search" and args.get("match") == "words" and "order" not in args:
        return sorted(json.dumps(e, sort_keys=True) for e in entries), last
    return entries, last


@_SETTINGS
@given(events=st.lists(EVENT, max_size=14), split=st.integers(0, 14),
       calls=st.lists(st.tuples(CALL, st.sampled_from(["literal", "words"])), min_size=1,
                      max_size=4))
@example(
    events=[('garbage', 'key', '\n')],
    split=0,
    calls=[({'action': 'list_windows', 'limit': 1}, 'literal')],
).via('discovered failure')
def test_three_backends_answer_alike(events: list[tuple[str, str, str]], split: int,
                                     calls: list[tuple[dict[str, Any], str]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        three = Three(Path(tmp), events, split)
        try:
            ids = three.ids()
            for raw, match in calls:
                args = _key(raw, ids)
                if args["action"] == "search":
                    args["match"] = match
                answers = {name: _same(args, _all(tool, args))
                           for name, tool in three.tools.items()}
                assert three.tools["index"].index_problem is None
                assert answers["index"] == answers["scan"], args
                assert answers["postgres"] == answers["scan"], args
        finally:
            three.pg.close()


KNOWN = [("text", "user", "needle one"), ("tool", "bash", "needle two"), ("rollover", "", ""),
         ("text", "assistant", "NEEDLE three"), ("reset", "", ""), ("text", "user", "needle four"),
         ("hidden", "lead-in", "needle hidden"), ("rollover", "", ""),
         ("text", "system", "needle five"), ("reuse", "", "needle six")]


def test_three_backends_agree_on_non_empty_answers(tmp_path: Path) -> None:
    three = Three(tmp_path, KNOWN, 3)
    try:
        calls: list[dict[str, Any]] = [
            {"action": "list_windows"},
            {"action": "search", "match": "literal", "query": "needle"},
            {"action": "search", "match": "literal", "query": "needle", "order": "oldest",
             "limit": 1},
            {"action": "search", "match": "literal", "query": "needle", "role": "user"},
            {"action": "search", "query": "needles", "order": "newest"},
            {"action": "search", "query": "Needle", "order": "oldest", "limit": 1},
        ]
        calls += [{"action": "list_items", "window_id": w} for w in three.ids()["windows"]]
        calls += [{"action": "read_item", "item_id": i} for i in three.ids()["items"]]
        compared = 0
        for args in calls:
            answers = {name: _all(tool, args) for name, tool in three.tools.items()}
            assert answers["index"] == answers["scan"] == answers["postgres"], args
            compared += bool(answers["scan"][0])
        assert compared == len(calls)  # every call found something, on all three
        relevance = {"action": "search", "match": "words", "query": "needle five"}
        ranked = {name: _all(tool, relevance)[0] for name, tool in three.tools.items()}
        assert len(ranked["scan"]) == 3  # any of the words, above the floor
        assert ranked["index"][0]["text"] == ranked["scan"][0]["text"] == "say needle five"
        assert _same(relevance, (ranked["index"], {})) == _same(relevance, (ranked["scan"], {}))
        assert _same(relevance, (ranked["postgres"], {})) == _same(relevance, (ranked["scan"], {}))
        found = _all(three.tools["scan"], {**calls[1], "query": "needle"})[0]
        assert [i["text"] for i in found] == ["again needle six", "say needle five",
                                              "say needle four"]  # nothing below the floor
    finally:
        three.pg.close()


def test_a_hit_gains_from_the_hit_just_before_it_on_every_backend(tmp_path: Path) -> None:
    """R39 "BM25 or better": an answer often stands right after the turn holding the words
    ("which vet saw the puppy?" — "Dr Ames, …"), so a hit on the line after a better hit
    ranks above its twin elsewhere; only a hit of the same search lends its score (with a
    role filter the question is not one, and the newer twin wins the tie again)."""
    events = [("text", "user", "which vet saw the new puppy"),
              ("text", "assistant", "Biscuit loves the puppy park"),
              ("text", "user", "lunch was good"),
              ("text", "assistant", "Pepper loves the puppy park")]
    three = Three(tmp_path, events, 1)
    try:
        query = {"action": "search", "query": "puppy vet"}
        filtered = {**query, "role": "assistant"}
        got = {name: ([str(i["text"]) for i in _all(tool, query)[0]],
                      [str(i["text"]) for i in _all(tool, filtered)[0]])
               for name, tool in three.tools.items()}  # fmt: skip
        want = (["say which vet saw the new puppy", "say Biscuit loves the puppy park",
                 "say Pepper loves the puppy park"],
                ["say Pepper loves the puppy park", "say Biscuit loves the puppy park"])
        assert got == dict.fromkeys(("scan", "index", "postgres"), want)
    finally:
        three.pg.close()


def test_a_word_family_porter_leaves_apart_meets_on_every_backend(tmp_path: Path) -> None:
    """R39 "the usual inflections folded": a term is a Porter stem cut to 5 characters, so
    "driving" (Porter: drive) finds "driver" (Porter: driver, cut: drive) the same way on
    every backend; "drove", an irregular form, stays another word."""
    events = [("text", "user", "the driver crashed twice"),
              ("text", "assistant", "lunch was good"),
              ("text", "user", "she drove home"),
              ("text", "assistant", "we were driving to the coast")]
    three = Three(tmp_path, events, 1)
    try:
        query = {"action": "search", "query": "driving", "order": "oldest"}
        got = {name: [str(i["text"]) for i in _all(tool, query)[0]]
               for name, tool in three.tools.items()}  # fmt: skip
        want = ["say the driver crashed twice", "say we were driving to the coast"]
        assert got == dict.fromkeys(("scan", "index", "postgres"), want)
    finally:
        three.pg.close()
