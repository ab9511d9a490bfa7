"""Property: for the same lines, ``session_history`` over PostgreSQL (answered in SQL) equals
the JSONL store's answers through its history index, page for page: every action, both
orders, the R36 filters, small limits and scan budgets that make queries page with cursors,
floors of every kind (manual resets, malformed rollovers, undecodable lines holding the
reset key), hidden and quarantined rows, reused sequences, tool calls (R11, R23-R27, R35,
R36). A batch appended between two pages keeps both cursors valid and both stores give the
same rows (only ``scanned`` may differ: the JSONL page reads the appended bytes to look for a
floor, PostgreSQL looks it up)."""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from segue._context.rollover import quarantined
from segue._history.store import HistoryStore
from segue._messages import Part, encode_row, make_row
from segue._retrieval.cursor import MAX_CURSOR
from segue._retrieval.envelope import MAX_RESULT, serialize
from segue._retrieval.index_build import rebuild
from segue._retrieval.tool import SessionHistoryTool
from segue._workspace import Layout
from segue.postgres._history_tool import PgSessionHistoryTool
from segue.postgres._store import PostgresStore
from tests.conftest import scaled
from tests.postgres.cluster import cluster
from tests.retrieval.helpers import (
    MUTATIONS,
    malformed_rollover,
    manual_reset,
    rollover,
    text_row,
    write_history,
)

WORDS = ["needle", "NEEDLE", "Kelvin \u212a", "straße", "STRASSE", "İstanbul", "ı", "ſ",
         "50%_off", "a\\b", "ab", "é", "\U0001f600 face", "x", "\ud800", "n\x00ul", "\ufffd"]
TEXT = st.lists(st.sampled_from(WORDS) | st.characters(codec="utf-8"), max_size=6).map(
    " ".join
)
TOOLS = ["bash", "file_read", "session_history"]
EVENT = st.one_of(
    st.tuples(st.just("text"), st.sampled_from(["user", "assistant", "system"]), TEXT),
    st.tuples(st.just("tool"), st.sampled_from(TOOLS), TEXT),
    st.tuples(st.just("rollover"), st.just(""), st.just("")),
    st.tuples(st.just("reset"), st.just(""), st.just("")),
    st.tuples(st.just("malformed"), st.sampled_from(sorted(MUTATIONS)), st.just("")),
    st.tuples(st.just("garbage"), st.sampled_from(["plain", "key"]), TEXT),
    st.tuples(st.just("hidden"), st.sampled_from(["lead-in", "quarantined"]), TEXT),
    st.tuples(st.just("reuse"), st.just(""), TEXT),
)
QUERY = st.sampled_from(
    [w.lower() for w in WORDS] + WORDS + ["say", "SAY ", "again", "out", "[tool", "e", "%", "_"]
)
CALL = st.fixed_dictionaries(
    {
        "action": st.sampled_from(["list_windows", "list_items", "search", "read_item"]),
        "limit": st.integers(1, 3),
    },
    optional={
        "query": QUERY,
        "role": st.sampled_from(["user", "assistant", "system"]),
        "tool_name": st.sampled_from(TOOLS),
        "order": st.sampled_from(["newest", "oldest"]),
        "max_chars_per_item": st.sampled_from([1, 8, 500]),
        "limit_chars": st.sampled_from([3, 40]),
    },
)
BOUNDS = st.sampled_from([(2 << 20, 500), (4096, 3), (1500, 500)])

_SETTINGS = settings(
    max_examples=scaled(60, 600),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
_DB: list[str] = []


def line_of(n: int, event: tuple[str, str, str]) -> bytes:
    kind, arg, text = event
    if kind == "text":
        return encode_row(text_row(f"say {text}", n, role=arg))
    if kind == "tool":
        part = Part(type="dynamic-tool", toolName=arg, toolCallId=f"t{n}",
                    state="output-available", input={"q": text}, output=f"out {text}")
        return encode_row(make_row("assistant", id=f"r{n}", parts=[part],
                                   metadata={"historySequence": n}))
    if kind == "rollover":
        return encode_row(rollover(n, rid=f"ro{n}"))
    if kind == "reset":
        return encode_row(manual_reset(n))
    if kind == "malformed":
        return malformed_rollover(n, arg)
    if kind == "garbage":
        key = b'"contextBoundaryKind":"reset",' if arg == "key" else b""
        body = text.encode("utf-8", "surrogatepass")  # undecodable too, sometimes
        return b'{"id":"g' + str(n).encode() + b'",' + key + b'"text":"' + body + b'"'
    if kind == "hidden":
        base = text_row(f"secret {text}", n)
        if arg == "lead-in":
            meta = {**base.metadata, "synthetic": True, "uiVisible": False}
            return encode_row(make_row("user", f"secret {text}", id=f"l{n}", metadata=meta))
        return encode_row(quarantined(base))
    return encode_row(text_row(f"again {text}", max(0, n - 3), rid=f"dup{n}"))


def _url() -> str:
    if not _DB:
        _DB.append(cluster().new_database())
    return _DB[0]


def _strip(answer: dict[str, Any], *, scanned: bool = True) -> dict[str, Any]:
    out = {k: v for k, v in answer.items() if k != "nextCursor" and (scanned or k != "scanned")}
    out["more"] = answer.get("nextCursor") is not None
    return out


def _entries(answer: dict[str, Any]) -> list[Any]:
    return list(answer.get("windows") or answer.get("items") or [])


def _key(args: dict[str, Any], ids: dict[str, list[str]]) -> dict[str, Any]:
    """The call with the action's own argument, taken from what the history holds."""
    out = dict(args)
    action = out["action"]
    if action == "search":
        out.setdefault("query", "say")
        out.setdefault("match", "literal")  # R23's literal search: the same order everywhere
    elif action == "list_items":
        out["window_id"] = ids["windows"][len(out.get("query", "")) % len(ids["windows"])]
    elif action == "read_item":
        items = ids["items"] or ["0"]
        out["item_id"] = items[len(out.get("query", "")) % len(items)]
    if action != "search":
        out.pop("query", None)
    return out


class Both:
    def __init__(self, root: Path, events: list[tuple[str, str, str]], split: int,
                 bounds: tuple[int, int]) -> None:
        ws = "t" + uuid.uuid4().hex[:10]
        self.layout = Layout(root, ws)
        lines = [line_of(n, e) for n, e in enumerate(events)]
        write_history(self.layout, lines[:split], lines[split:])
        disk = HistoryStore(self.layout)
        disk.recover()
        rebuild(self.layout)
        self.pg = PostgresStore(_url(), ws)
        # the very lines, byte for byte (``history migrate`` would refuse reused sequences)
        self.pg.load_lines(
            [*(("archive", x) for x in lines[:split]), *(("chat", x) for x in lines[split:])],
            disk.next_sequence(),
        )
        max_bytes, max_rows = bounds
        self.jsonl_tool = SessionHistoryTool(self.layout, max_bytes=max_bytes, max_rows=max_rows)
        self.pg_tool = PgSessionHistoryTool(self.pg, max_bytes=max_bytes, max_rows=max_rows)

    def jsonl(self, args: dict[str, Any]) -> dict[str, Any]:
        answer = self.jsonl_tool.call(args)
        # the JSONL side answers through its index: the path PostgreSQL's must equal
        assert self.jsonl_tool.index_problem is None, self.jsonl_tool.index_problem
        return answer

    def ids(self) -> dict[str, list[str]]:
        windows = [w["windowId"] for w in _entries(self.jsonl({"action": "list_windows",
                                                               "limit": 50}))]
        items: list[str] = []
        for wid in windows[:3]:
            got = self.jsonl({"action": "list_items", "window_id": wid, "limit": 25})
            items += [i["itemId"] for i in _entries(got)]
        return {"windows": windows or ["w:0"], "items": items}

    def pages(self, args: dict[str, Any]) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
        ja, pa = self.jsonl(args), self.pg_tool.call(args)
        for _ in range(200):
            yield ja, pa
            if not ja.get("nextCursor") or not pa.get("nextCursor"):
                return
            ja = self.jsonl({**args, "cursor": ja["nextCursor"]})
            pa = self.pg_tool.call({**args, "cursor": pa["nextCursor"]})
        raise AssertionError("paging did not end")


@_SETTINGS
@given(events=st.lists(EVENT, max_size=14), split=st.integers(0, 14),
       calls=st.lists(CALL, min_size=1, max_size=4), bounds=BOUNDS)
def test_page_for_page(events: list[tuple[str, str, str]], split: int,
                       calls: list[dict[str, Any]], bounds: tuple[int, int]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        both = Both(Path(tmp), events, split, bounds)
        try:
            ids = both.ids()
            for raw in calls:
                args = _key(raw, ids)
                for ja, pa in both.pages(args):
                    assert len(serialize(pa)) <= MAX_RESULT
                    assert len(pa.get("nextCursor") or "") <= MAX_CURSOR
                    if pa["ok"]:
                        assert pa["scanned"]["bytes"] <= bounds[0]
                        assert pa["scanned"]["rows"] <= bounds[1]
                    assert _strip(pa) == _strip(ja), args
        finally:
            both.pg.close()


@_SETTINGS
@given(events=st.lists(EVENT, min_size=1, max_size=12), call=CALL,
       appended=st.lists(st.tuples(st.sampled_from(["user", "assistant"]), TEXT),
                         min_size=1, max_size=3))
def test_an_append_between_pages(events: list[tuple[str, str, str]], call: dict[str, Any],
                                 appended: list[tuple[str, str]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        both = Both(Path(tmp), events, 0, (2 << 20, 500))
        try:
            args = _key({**call, "limit": 1}, both.ids())
            ja, pa = both.jsonl(args), both.pg_tool.call(args)
            assert _strip(pa) == _strip(ja)
            rows = [make_row(role, f"late {text} needle", id=f"late{i}")  # type: ignore[arg-type]
                    for i, (role, text) in enumerate(appended)]
            assert HistoryStore(both.layout, durable=False).append(rows) == both.pg.append(rows)
            got = {"j": _entries(ja), "p": _entries(pa)}
            while ja.get("nextCursor") and pa.get("nextCursor"):
                ja = both.jsonl({**args, "cursor": ja["nextCursor"]})
                pa = both.pg_tool.call({**args, "cursor": pa["nextCursor"]})
                assert pa["ok"] == ja["ok"] is True  # a verified append expires no cursor
                got["j"] += _entries(ja)
                got["p"] += _entries(pa)
            assert _strip(pa, scanned=False) == _strip(ja, scanned=False)
            assert got["p"] == got["j"]
        finally:
            both.pg.close()
