"""Words search (R39) through the model's tool, on the bounded scan and the history index:
what it finds (stems, identifiers by their parts, tool calls as typed), how it ranks (more of
the words first, machine notes last), snippets centred where the words meet, rank-order
cursors across appends, ``read_item`` ``context`` within 16 KiB, and the floor, bounds,
projection and filters held exactly as for a literal search (generated histories, every
filter)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from segue._context.rollover import warning_row
from segue._history.store import HistoryStore
from segue._messages import Part, Row, encode_row, make_row
from segue._retrieval import SessionHistoryTool
from segue._retrieval.envelope import MAX_RESULT, serialize
from segue._retrieval.index_build import rebuild
from segue._workspace import Layout
from tests.postgres.test_tool_equivalence import EVENT, line_of
from tests.retrieval.helpers import (
    call,
    entries,
    manual_reset,
    rollover,
    text_row,
    write_history,
)

STORES = ["scan", "index"]


def _tool(layout: Layout, rows: list[bytes], store: str) -> SessionHistoryTool:
    write_history(layout, [], rows)
    if store == "index":
        rebuild(layout)
    return SessionHistoryTool(layout, use_index=store == "index")


def _bash(seq: int, command: str, output: str) -> Row:
    part = Part(type="dynamic-tool", toolName="bash", toolCallId=f"c{seq}",
                state="output-available", input={"command": command}, output=output)
    return make_row("assistant", id=f"t{seq}", parts=[part], metadata={"historySequence": seq})


def _texts(tool: SessionHistoryTool, args: dict[str, Any]) -> list[str]:
    got = call(tool, args)
    assert got["ok"], got
    return [str(i["text"]) for i in got["items"]]


@pytest.mark.parametrize("store", STORES)
def test_words_find_stems_parts_and_commands_as_typed(tmp_path: Path, store: str) -> None:
    rows = [
        text_row("parse_config failed with ERR_CONNECTION_RESET in src/app/net_io.py", 0),
        text_row("lunch was good", 1),
        _bash(2, 'find_file "numpy_handler.py"', "found 1 match"),
        text_row("we were parsing the configs again", 3),
        text_row("the driver crashed twice", 4),
    ]
    tool = _tool(Layout(tmp_path, "ws"), [encode_row(r) for r in rows], store)
    # a word family Porter leaves apart (drive, driver) meets: stems are cut to 5 characters
    assert _texts(tool, {"action": "search", "query": "driving"}) == ["the driver crashed twice"]
    assert _texts(tool, {"action": "search", "query": "connection reset"})[0].startswith("parse_")
    assert len(_texts(tool, {"action": "search", "query": "config parse"})) == 2  # stems
    assert _texts(tool, {"action": "search", "query": "net_io.py"})[0].startswith("parse_")
    typed = {"action": "search", "match": "literal", "query": 'find_file "numpy_handler.py"'}
    assert _texts(tool, typed) == ['[tool bash] find_file "numpy_handler.py"\nfound 1 match']
    assert _texts(tool, {"action": "search", "query": "numpy handler"})[0].startswith("[tool bash]")
    assert _texts(tool, {"action": "search", "query": "dinner"}) == []


@pytest.mark.parametrize("store", STORES)
def test_more_of_the_words_rank_first_and_machine_notes_last(tmp_path: Path, store: str) -> None:
    note = warning_row(row_id="w", now_ms=1, percent=60, label="Rolls over by 75%",
                       context_tokens=1, max_tokens=2, budget_tokens=2)
    rows = [
        text_row("the deploy failed: disk quota exceeded on the build runner", 0),
        text_row("deploy notes for later", 1),
        note,  # mentions "window" and "context": a machine note
        text_row("the context window of the runner", 3),
        text_row("deploy again tomorrow", 4),
    ]
    tool = _tool(Layout(tmp_path, "ws"), [encode_row(r) for r in rows], store)
    ranked = _texts(tool, {"action": "search", "query": "deploy quota runner"})
    assert ranked[0].startswith("the deploy failed")
    assert len(ranked) == 4
    machine = _texts(tool, {"action": "search", "query": "context window"})
    assert machine[0] == "the context window of the runner"
    assert machine[-1].startswith("[segue] Context usage")
    # newest / oldest still order a words search by time
    newest = _texts(tool, {"action": "search", "query": "deploy", "order": "newest"})
    assert newest == ["deploy again tomorrow", "deploy notes for later",
                      "the deploy failed: disk quota exceeded on the build runner"]


@pytest.mark.parametrize("store", STORES)
def test_the_snippet_centres_on_where_the_words_meet(tmp_path: Path, store: str) -> None:
    trace = ("Traceback: raise last_exception " + "frame line\n" * 200
             + "AttributeError: 'NoneType' object has no attribute 'shape' exception")
    tool = _tool(Layout(tmp_path, "ws"), [encode_row(text_row(trace, 0))], store)
    (snippet,) = _texts(tool, {"action": "search", "query": "AttributeError exception"})
    assert "AttributeError" in snippet and "last_exception" not in snippet
    (literal,) = _texts(tool, {"action": "search", "match": "literal", "query": "exception"})
    assert "last_exception" in literal  # a literal search keeps the first match


def test_arguments_of_words_search() -> None:
    tool = SessionHistoryTool(Layout(Path("/nonexistent"), "ws"), use_index=False)
    bad: list[dict[str, Any]] = [
        {"action": "search", "query": "x", "match": "fuzzy"},
        {"action": "search", "query": "x", "match": "literal", "order": "relevance"},
        {"action": "list_items", "window_id": "w:0", "order": "relevance"},
        {"action": "list_windows", "match": "words"},
        {"action": "search", "query": "x", "context": 1},
        {"action": "read_item", "item_id": "1", "context": 6},
    ]
    for args in bad:
        got = tool.call(args)
        assert got["ok"] is False and got["error"]["code"] == "invalid_argument", (args, got)


@pytest.mark.parametrize("store", STORES)
def test_rank_order_cursors_page_without_repeats_or_losses_across_appends(
    tmp_path: Path, store: str
) -> None:
    layout = Layout(tmp_path, "ws")
    rows = [text_row(f"alpha {'beta ' * (i % 4)}row {i}", i) for i in range(60)]
    tool = _tool(layout, [encode_row(r) for r in rows], store)
    args: dict[str, Any] = {"action": "search", "query": "alpha beta", "limit": 3}
    got: list[str] = []
    page = call(tool, args)
    appended = 0
    while True:
        assert page["ok"], page
        got += [i["itemId"] for i in page["items"]]
        if page["nextCursor"] is None:
            break
        HistoryStore(layout, durable=False).append(
            [make_row("user", f"alpha beta late {appended}", id=f"late{appended}")]
        )
        appended += 1
        page = call(tool, {**args, "cursor": page["nextCursor"]})
    assert sorted(got, key=int) == [str(i) for i in range(60)]  # each once, none appended
    assert appended > 5


@pytest.mark.parametrize("store", STORES)
def test_read_item_context_stays_in_its_window_and_in_16_kib(tmp_path: Path, store: str) -> None:
    big = "x" * 3000
    rows = [text_row(f"old {i}", i) for i in range(3)] + [rollover(3)]
    rows += [text_row(f"item {i} {big}", i) for i in range(4, 14)]
    tool = _tool(Layout(tmp_path, "ws"), [encode_row(r) for r in rows], store)
    got = call(tool, {"action": "read_item", "item_id": "5", "context": 3})
    assert got["ok"], got
    assert len(serialize(got)) <= MAX_RESULT
    assert [i["itemId"] for i in got["items"]] == ["4", "5", "6", "7", "8"]  # not w:0's
    edge = call(tool, {"action": "read_item", "item_id": "13", "context": 5, "limit_chars": 12000})
    assert len(serialize(edge)) <= MAX_RESULT
    ids = [i["itemId"] for i in edge["items"]]
    assert ids[-1] == "13" and set(ids) <= {str(i) for i in range(8, 14)}
    plain = call(tool, {"action": "read_item", "item_id": "5"})
    assert [i["itemId"] for i in plain["items"]] == ["5"]


FILTERS = st.fixed_dictionaries(
    {},
    optional={
        "role": st.sampled_from(["user", "assistant", "system"]),
        "tool_name": st.sampled_from(["bash", "file_read", "session_history"]),
        "order": st.sampled_from(["relevance", "newest", "oldest"]),
        "limit": st.integers(1, 4),
        "max_chars_per_item": st.sampled_from([1, 8, 500]),
    },
)
QUERIES = st.sampled_from(["say", "needle", "secret", "again out", "STRASSE", "tool facts",
                           "reset", "kelvin", "istanbul"])


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(events=st.lists(EVENT, max_size=14), split=st.integers(0, 14), query=QUERIES,
       filters=FILTERS)
def test_the_floor_and_filters_hold_under_relevance(
    events: list[tuple[str, str, str]], split: int, query: str, filters: dict[str, Any]
) -> None:
    """Every item a words search returns is one list_items (the rules' own reading) shows
    above the floor with the same filters, on the scan and the index alike; nothing hidden,
    nothing cleared, nothing twice."""
    with tempfile.TemporaryDirectory() as tmp:
        layout = Layout(Path(tmp), "ws")
        lines = [line_of(n, e) for n, e in enumerate(events)]
        write_history(layout, lines[:split], lines[split:])
        HistoryStore(layout).recover()
        rebuild(layout)
        scan = SessionHistoryTool(layout, use_index=False)
        narrow = {k: v for k, v in filters.items() if k in ("role", "tool_name")}
        allowed: set[tuple[str, str]] = set()
        for window in entries(scan, {"action": "list_windows"}):
            for item in entries(scan, {"action": "list_items", "window_id": window["windowId"],
                                       **narrow}):
                allowed.add((item["itemId"], item["windowId"]))
        found: dict[str, list[tuple[str, str]]] = {}
        for store in STORES:
            tool = SessionHistoryTool(layout, use_index=store == "index")
            got = entries(tool, {"action": "search", "query": query, **filters})
            found[store] = [(i["itemId"], i["windowId"]) for i in got]
            assert set(found[store]) <= allowed, (store, found[store], allowed)
            assert not any("secret" in str(i["text"]) for i in got)  # hidden rows never
            if "role" in filters:
                assert all(i["role"] == filters["role"] for i in got)
        assert sorted(found["scan"]) == sorted(found["index"])


@pytest.mark.parametrize("store", STORES)
def test_nothing_below_the_floor_ranks(tmp_path: Path, store: str) -> None:
    rows = [text_row("needle secret plans needle needle", 0), _bash(1, "needle", "needle"),
            manual_reset(2), text_row("one needle", 3), _bash(4, "ls needle", "ok"),
            text_row("needle haystack", 5, role="assistant")]
    tool = _tool(Layout(tmp_path, "ws"), [encode_row(r) for r in rows], store)
    every = _texts(tool, {"action": "search", "query": "needle plans"})
    assert sorted(every) == sorted(["one needle", "[tool bash] ls needle\nok", "needle haystack"])
    assert _texts(tool, {"action": "search", "query": "needle", "tool_name": "bash"}) == [
        "[tool bash] ls needle\nok"]
    assert _texts(tool, {"action": "search", "query": "needle", "role": "assistant",
                         "tool_name": "bash"}) == ["[tool bash] ls needle\nok"]
    assert _texts(tool, {"action": "search", "query": "secret plans"}) == []


@pytest.mark.parametrize("store", STORES)
def test_a_query_without_terms_answers_at_once(tmp_path: Path, store: str) -> None:
    """Only punctuation: no item can match (R39); one call, nothing read, and a note that
    the literal search finds the text (the scan used to page the whole history)."""
    rows = [text_row(f"row {i}: done !!! ok", i) for i in range(1200)]
    tool = _tool(Layout(tmp_path, "ws"), [encode_row(r) for r in rows], store)
    for order in ("relevance", "newest", "oldest"):
        got = call(tool, {"action": "search", "query": "!!! ?", "order": order})
        assert (got["items"], got["nextCursor"]) == ([], None), (order, got)
        assert got["scanned"] == {"bytes": 0, "rows": 0}
        assert 'match: "literal"' in got["note"]
