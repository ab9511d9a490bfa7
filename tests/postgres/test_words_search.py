"""R39's words search on the PostgreSQL store, answered in SQL: the words column (segue's own
terms, their counts spelled as lexemes), BM25 ranking from its GIN index, the floor and the
filters under relevance order, cursors in rank order across appends, and an item whose words
do not fit a column."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from segue._history.store import HistoryStore
from segue._messages import Row, make_row
from segue._retrieval.index_build import rebuild
from segue._retrieval.ranking import index_terms
from segue._retrieval.tool import SessionHistoryTool
from segue._workspace import Layout
from segue.postgres._history_tool import PgSessionHistoryTool
from segue.postgres._rows import COUNT_BITS, MAX_COUNT, words_of
from segue.postgres._store import PostgresStore
from tests.conftest import scaled
from tests.postgres.test_tool_equivalence import _url, line_of

WORDS = {"action": "search", "match": "words"}


def _all(tool: SessionHistoryTool, args: dict[str, Any]) -> list[dict[str, Any]]:
    """Every item of a query, paged to its end."""
    got: list[dict[str, Any]] = []
    answer = tool.call(args)
    for _ in range(200):
        assert answer["ok"], answer
        got += answer["items"]
        if not answer["nextCursor"]:
            return got
        answer = tool.call({**args, "cursor": answer["nextCursor"]})
    raise AssertionError("paging did not end")


@given(st.integers(1, 3 * MAX_COUNT))
def test_a_terms_count_is_spelled_in_lexemes(count: int) -> None:
    vector, length = words_of("alpha " * count + "beta")
    assert vector is not None
    lexemes = set(vector.split())
    alpha, beta = index_terms("alpha"), index_terms("beta")
    bits = {k for k in range(COUNT_BITS) if f"{alpha}{k}" in lexemes}
    assert 1 + sum(1 << k for k in bits) == min(count, MAX_COUNT)
    assert {alpha, beta} <= lexemes
    assert not any(f"{beta}{k}" in lexemes for k in range(COUNT_BITS))  # once: no bits
    assert length == count + 1


def _store(root: Path, rows: list[Row]) -> tuple[PostgresStore, Layout]:
    """The rows in a new PostgreSQL workspace and in a JSONL store with its index."""
    ws = "w" + uuid.uuid4().hex[:10]
    layout = Layout(root, ws)
    HistoryStore(layout, durable=False).append(rows)
    rebuild(layout)
    pg = PostgresStore(_url(), ws)
    pg.append(rows)
    return pg, layout


def test_ranking_in_sql_puts_rare_words_first_and_machine_notes_below(tmp_path: Path) -> None:
    rows = [make_row("user", "the zanzibar error, once", id="rare-old")]
    rows += [make_row("assistant", f"error in step {i} of the build", id=f"e{i}")
             for i in range(40)]
    rows += [make_row("user", "the zanzibar error, once", id="rare-new"),
             make_row("user", "the zanzibar error, once", id="note",
                      metadata={"synthetic": True, "uiVisible": True})]
    pg, layout = _store(tmp_path, rows)
    try:
        tool = PgSessionHistoryTool(pg)
        got = _all(tool, {**WORDS, "query": "zanzibar error", "limit": 5})
        # both rare rows first (the newer of two equals first), the machine note next
        assert [i["text"] for i in got[:3]] == ["the zanzibar error, once"] * 3
        first = tool.call({**WORDS, "query": "zanzibar error", "limit": 3})
        ids = [i["itemId"] for i in first["items"]]
        assert ids == ["41", "0", "42"], ids  # rare-new, rare-old, then the note
        assert len(got) == 43
        # the same items as the JSONL store's index and its bounded scan find
        index = _all(SessionHistoryTool(layout), {**WORDS, "query": "zanzibar error"})
        scan = _all(SessionHistoryTool(layout, use_index=False),
                    {**WORDS, "query": "zanzibar error"})
        assert sorted(i["itemId"] for i in got) == sorted(i["itemId"] for i in index)
        assert sorted(i["itemId"] for i in got) == sorted(i["itemId"] for i in scan)
    finally:
        pg.close()


def test_rank_order_cursors_survive_an_append(tmp_path: Path) -> None:
    # each hit between two rows without the word: none gains from a neighbour (ranking.py)
    rows = [row for i in range(30) for row in (
        make_row("user", f"needle {'hay ' * (i % 7)}{i}", id=f"n{i}"),
        make_row("assistant", f"straw {i}", id=f"s{i}"),
    )]  # fmt: skip
    pg, _ = _store(tmp_path, rows)
    try:
        tool = PgSessionHistoryTool(pg)
        args = {**WORDS, "query": "needle", "limit": 4}
        answer = tool.call(args)
        seen = [i["itemId"] for i in answer["items"]]
        pg.append([make_row("user", f"late needle {i}", id=f"late{i}") for i in range(3)])
        while answer["nextCursor"]:
            answer = tool.call({**args, "cursor": answer["nextCursor"]})
            assert answer["ok"], answer  # a verified append expires no cursor
            seen += [i["itemId"] for i in answer["items"]]
        # every item of the query as of its first page, once; the appended ones are not in it
        assert sorted(seen, key=int) == [str(2 * i) for i in range(30)]
        # shorter items rank above longer ones holding the word as often (BM25's length)
        assert seen[0] in {str(2 * i) for i in range(30) if i % 7 == 0}
    finally:
        pg.close()


def test_an_item_whose_words_do_not_fit_a_column_is_still_found(tmp_path: Path) -> None:
    text = " ".join(f"w{i}x" for i in range(60_000))
    assert words_of(text)[0] is None  # too many distinct terms for one column
    pg, layout = _store(tmp_path, [make_row("user", text, id="big"),
                                   make_row("user", "w59999x alone", id="small")])
    try:
        tool = PgSessionHistoryTool(pg)
        got = _all(tool, {**WORDS, "query": "w59999x"})
        assert sorted(i["itemId"] for i in got) == ["0", "1"]
        want = _all(SessionHistoryTool(layout), {**WORDS, "query": "w59999x"})
        assert sorted(i["itemId"] for i in want) == ["0", "1"]
    finally:
        pg.close()


# -- the floor and the filters under relevance order -------------------------------------

TEXT = st.lists(st.sampled_from(["needle", "hay", "stack", "NEEDLE"]), min_size=1, max_size=4)
EVENT: st.SearchStrategy[tuple[str, str, list[str]]] = st.one_of(
    st.tuples(st.just("text"), st.sampled_from(["user", "assistant", "system"]), TEXT),
    st.tuples(st.just("tool"), st.sampled_from(["bash", "file_read"]), TEXT),
    st.tuples(st.just("reset"), st.just(""), st.just([])),
    st.tuples(st.just("rollover"), st.just(""), st.just([])),
)
FILTERS = st.fixed_dictionaries({}, optional={
    "role": st.sampled_from(["user", "assistant", "system"]),
    "tool_name": st.sampled_from(["bash", "file_read"]),
    "limit": st.integers(1, 3),
})
KNOWN = [("text", "user", ["needle"]), ("reset", "", []), ("text", "user", ["needle", "hay"]),
         ("tool", "bash", ["needle"]), ("text", "assistant", ["hay"])]


def _check(events: list[tuple[str, str, list[str]]], filters: dict[str, Any]) -> int:
    """A words search in relevance order, paged to its end, returns exactly the items above
    the newest reset that hold the word and pass the filters, each once; returns how many."""
    lines = [line_of(n, (kind, arg, " ".join(words))) for n, (kind, arg, words) in
             enumerate(events)]
    last_reset = max((n for n, e in enumerate(events) if e[0] == "reset"), default=-1)
    want = set()
    for n, (kind, arg, words) in enumerate(events):
        if n <= last_reset or kind not in ("text", "tool"):
            continue
        if not {"needle", "NEEDLE"} & set(words):
            continue
        role, tool = (arg, None) if kind == "text" else ("assistant", arg)
        if filters.get("role", role) == role and filters.get("tool_name", tool) == tool:
            want.add(str(n))
    pg = PostgresStore(_url(), "f" + uuid.uuid4().hex[:10])
    try:
        pg.load_lines([("chat", x) for x in lines], len(lines))
        got = _all(PgSessionHistoryTool(pg), {**WORDS, "query": "needles", **filters})
        ids = [i["itemId"] for i in got]
        assert len(ids) == len(set(ids))  # nothing twice
        assert set(ids) == want, (ids, want)
        return len(want)
    finally:
        pg.close()


@settings(max_examples=scaled(30, 300), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(events=st.lists(EVENT, min_size=1, max_size=14), filters=FILTERS)
def test_the_floor_and_filters_hold_under_relevance(
    events: list[tuple[str, str, list[str]]], filters: dict[str, Any]
) -> None:
    _check(events, filters)


def test_the_floor_and_filters_on_a_known_history() -> None:
    assert _check(KNOWN, {}) == 2  # the two above the reset, not the one below it
    assert _check(KNOWN, {"role": "user"}) == 1
    assert _check(KNOWN, {"tool_name": "bash", "limit": 1}) == 1
    assert _check(KNOWN, {"role": "system"}) == 0


def test_a_query_without_terms_answers_at_once_on_every_backend(tmp_path: Path) -> None:
    """Only punctuation or symbols: no item can match; every backend says so in one call,
    reading nothing, and points to the literal search (which finds the text)."""
    rows = [make_row("user", f"row {i}: done !!! -- ok", id=f"r{i}") for i in range(1500)]
    pg, layout = _store(tmp_path, rows)
    try:
        tools = {
            "scan": SessionHistoryTool(layout, use_index=False),
            "index": SessionHistoryTool(layout),
            "pg": PgSessionHistoryTool(pg),
        }
        for name, tool in tools.items():
            for args in ({"query": "!!!"}, {"query": "-- ::", "order": "oldest"},
                         {"query": "!!!", "order": "newest", "role": "user"}):
                got = tool.call({"action": "search", **args})
                assert got["ok"], (name, got)
                assert (got["items"], got["nextCursor"]) == ([], None), (name, args)
                assert 'match: "literal"' in got["note"], (name, got)
                assert got["scanned"]["rows"] == 0, (name, got["scanned"])
            literal = {"action": "search", "query": "!!!", "match": "literal"}
            page = tool.call(literal)
            for _ in range(10):  # the scan pages until it learns the hits' window
                if page["items"] or page["nextCursor"] is None:
                    break
                page = tool.call({**literal, "cursor": page["nextCursor"]})
            assert page["items"], name
    finally:
        pg.close()
