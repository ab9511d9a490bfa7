"""A person's searches on the PostgreSQL store. ``segue --store postgresql://… history search
--words`` answered through the store's indexes
(R39, SPEC.md §8: "never a full-table scan in Python"): the very listing the JSONL store gives
— the same hits, scores, order, windows and snippets — without walking every row. The JSONL
files are the reference; each comparison asserts that it compared hits, and the PostgreSQL
side runs with the walk over every row made to fail, so what answered is the store's index.
The literal ``history search`` lists lines too long to parse when stored, and names the window
each hit is in, as the files' search does."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from segue._context.rollover import manual_reset_row
from segue._history.store import HistoryStore
from segue._messages import with_metadata
from segue._workspace import Layout
from segue.postgres import PostgresStore
from tests.cli.test_search_words import ANSWERED, answered_first
from tests.front import cli
from tests.index.histories import Op, lines_of, ops
from tests.index.test_people_words import _tool_row
from tests.index.walks import counting, no_walk
from tests.postgres.test_three_backends import _physical
from tests.postgres.test_tool_equivalence import _url
from tests.retrieval.helpers import text_row, write_history

QUERIES = ["needle", "needle tail", "straße kelvin", "calls out", "command", "hay ne tail",
           "istanbul", "r1 r2 r3", "grep src"]


def _run(home: Path, ws: str, *args: str, url: str | None = None) -> tuple[int, str]:
    store = ["--store", url] if url else []
    result = CliRunner().invoke(cli, ["--home", str(home), "-w", ws, *store, *args])
    # a search's exit 1 is "no hits"; any other failure shows its message
    plain = result.exit_code == 0 or (result.exit_code == 1 and args[1] == "search")
    return result.exit_code, result.stdout if plain else result.output


def _words(home: Path, ws: str, query: str, url: str | None = None) -> list[dict[str, object]]:
    code, out = _run(home, ws, "history", "search", "--words", "--json", query, url=url)
    assert code in (0, 1), out
    items: list[dict[str, object]] = json.loads(out)["items"]
    assert code == (0 if items else 1)
    return items


def _migrate(home: Path, ws: str, url: str) -> None:
    code, out = _run(home, ws, "history", "migrate", "--to", url)
    assert code == 0, out


def _long_reset(home: Path, ws: str, url: str) -> None:
    """A history whose second window is opened by a reset line over 1 MiB, with a "needle"
    hit on each side of it, migrated to the store at ``url``."""
    store = HistoryStore(Layout(home, ws), durable=False)
    store.append([text_row("needle before", None, rid="a")])
    store.append([with_metadata(manual_reset_row(row_id="big-reset", now_ms=1),
                                pad="z " * (600 << 10)),
                  text_row("needle after the reset", None, rid="c")])
    _migrate(home, ws, url)


def _tool_calls(home: Path, ws: str, url: str, commands: list[str], text: str) -> None:
    """A history of one bash call per command and a plain text item, migrated to ``url``."""
    HistoryStore(Layout(home, ws), durable=False).append(
        [_tool_row(i, c) for i, c in enumerate(commands)] + [text_row(text, None, rid="x")]
    )
    _migrate(home, ws, url)


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(history=st.lists(ops, min_size=1, max_size=14), split=st.integers(0, 14),
       tail=st.integers(0, 3))
def test_the_store_lists_what_the_files_list(
    tmp_path_factory: pytest.TempPathFactory, history: list[Op], split: int, tail: int
) -> None:
    """Generated histories (tool calls, lead-ins, boundaries, floors, damaged and raw lines,
    replays) moved into PostgreSQL, then rows appended to both stores through their own
    append (the store's ``segue_append``): every query's listing is the files'."""
    home = tmp_path_factory.mktemp("pgw")
    ws = "w" + uuid.uuid4().hex[:10]
    url = _url()
    layout = Layout(home, ws)
    lines = lines_of(history)
    write_history(layout, lines[:split], lines[split:])
    disk = HistoryStore(layout)
    disk.recover()
    with PostgresStore(url, ws) as pg:  # the lines as they are (damage too: migrate refuses it)
        pg.load_lines([*(("archive", x) for x in _physical(lines[:split])),
                       *(("chat", x) for x in _physical(lines[split:]))], disk.next_sequence())
    late = [text_row(f"needle appended {k} tail", None, rid=f"late{k}") for k in range(tail)]
    late.append(_tool_row(99, "grep -rn needle src"))
    HistoryStore(layout, durable=False).append(late)
    with PostgresStore(url, ws) as pg:
        pg.append(late)
    expected = {q: _words(home, ws, q) for q in QUERIES}
    assert expected["needle"] and expected["grep src"]  # the appended tool call, at least
    with pytest.MonkeyPatch.context() as mp:
        no_walk(mp)
        for q in QUERIES:
            assert _words(home, ws, q, url) == expected[q], q


def test_people_text_the_agent_does_not_read_is_found(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A person reads a tool call as its JSON input (``{"command": ...}``), the agent as the
    command typed: the word ``command`` is only in the people's text, and the store finds it;
    a text with a lone surrogate and a line longer than a row is parsed when stored are read
    and ranked like the rest."""
    layout = Layout(tmp_path, "pw")
    store = HistoryStore(layout, durable=False)
    store.append([text_row("plain words about a deploy", None, rid="p0")]
                 + [_tool_row(i, f"ls -la dir{i}") for i in range(4)])
    store.append([text_row("lone \ud800 surrogate command needle", None, rid="s1"),
                  text_row("needle command " + "z " * (600 << 10), None, rid="huge")])
    store.append([text_row("the command line needle", None, rid="p1")])
    _migrate(tmp_path, "pw", pg_url)
    expected = {q: _words(tmp_path, "pw", q) for q in ["command", "needle command", "deploy"]}
    texts = [str(h["text"]) for h in expected["command"]]
    assert len(texts) == 7 and sum('"command":"ls -la' in t for t in texts) == 4, texts
    assert any("surrogate" in t for t in texts)
    assert any(t.startswith("needle command z") for t in texts)
    no_walk(monkeypatch)
    for q, want in expected.items():
        assert _words(tmp_path, "pw", q, pg_url) == want, q


def test_a_long_line_that_opens_a_window_is_walked(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reset line over 1 MiB is stored without being parsed, so the store's window column
    never saw the window it opens: the search walks the rows, and every later hit still
    names the window it is in."""
    _long_reset(tmp_path, "lr", pg_url)
    expected = _words(tmp_path, "lr", "needle")
    assert len(expected) == 2 and len({h["windowId"] for h in expected}) == 2
    walks = counting(monkeypatch)
    assert _words(tmp_path, "lr", "needle", pg_url) == expected
    assert walks  # walked, as the window column could not answer


def test_an_answer_after_its_question_ranks_first(pg_url: str, tmp_path: Path) -> None:
    ws = "w" + uuid.uuid4().hex[:10]
    HistoryStore(Layout(tmp_path, ws), durable=False).append(ANSWERED)
    _migrate(tmp_path, ws, pg_url)
    with pytest.MonkeyPatch.context() as mp:
        no_walk(mp)
        answered_first(_words(tmp_path, ws, "cat called", pg_url))


def test_a_stored_count_that_disagrees_is_not_believed(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each row stores its number of people's terms; a candidate with another number when it
    is read makes the search walk, so the listing stays the files'. Rows derived by another
    version of segue are walked too."""
    layout = Layout(tmp_path, "mc")
    HistoryStore(layout, durable=False).append(
        [text_row(f"needle {'hay ' * i}tail", None, rid=f"n{i}") for i in range(6)]
    )
    _migrate(tmp_path, "mc", pg_url)
    expected = _words(tmp_path, "mc", "needle")
    assert len(expected) == 6
    walks = counting(monkeypatch)
    assert _words(tmp_path, "mc", "needle", pg_url) == expected
    assert not walks  # the stored counts answered
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("UPDATE segue_rows SET plen = plen + 5 WHERE plen >= 0")
    assert _words(tmp_path, "mc", "needle", pg_url) == expected
    assert walks
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("UPDATE segue_rows SET plen = plen - 5 WHERE plen >= 0")
    walks.clear()
    assert _words(tmp_path, "mc", "needle", pg_url) == expected
    assert not walks  # the counts agree again
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("UPDATE segue_workspaces SET derived = 'segue-pg-derived/0'")
    assert _words(tmp_path, "mc", "needle", pg_url) == expected
    assert walks


def test_the_columns_are_derived_again_for_stored_rows(pg_url: str, tmp_path: Path) -> None:
    """The columns a person's words search reads are derived for rows already stored (what
    ``segue store init`` does after an upgrade), the same as an append stores them."""
    _tool_calls(tmp_path, "dr", pg_url, [f"make test{i}" for i in range(3)],
                "needle in plain text")
    with psycopg.connect(pg_url, autocommit=True) as conn:
        stored = conn.execute("SELECT pos, plen, pwords FROM segue_rows ORDER BY pos").fetchall()
        assert any(p is not None and p > 0 for _, p, _ in stored)
        assert any(w is not None for _, _, w in stored)  # a tool call's ``command``
        conn.execute("UPDATE segue_rows SET plen = NULL, pwords = NULL")
        conn.execute("UPDATE segue_workspaces SET derived = ''")  # as another version left it
    with PostgresStore(pg_url, "dr") as pg:
        pg.rederive()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        again = conn.execute("SELECT pos, plen, pwords FROM segue_rows ORDER BY pos").fetchall()
    assert again == stored


def test_a_schema_6_store_is_upgraded_and_answers_from_its_indexes(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store as schema version 6 left it (no people's terms) is upgraded on first use: the
    columns are added and filled for the stored rows, and the search answers from them."""
    _tool_calls(tmp_path, "up", pg_url, [f"pytest -k case{i}" for i in range(4)],
                "a needle and a command")
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("DROP FUNCTION segue_append")
        conn.execute("ALTER TABLE segue_rows DROP COLUMN plen, DROP COLUMN pwords")
        conn.execute("DELETE FROM segue_schema WHERE version >= 7")
        conn.execute("UPDATE segue_workspaces SET derived = 'segue-pg-derived/4'")
    expected = {q: _words(tmp_path, "up", q) for q in ["command", "pytest case2", "needle"]}
    assert len(expected["command"]) == 5
    no_walk(monkeypatch)
    for q, want in expected.items():
        assert _words(tmp_path, "up", q, pg_url) == want, q
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert conn.execute("SELECT max(version) FROM segue_schema").fetchone() == (7,)


def _literal(home: Path, ws: str, query: str, url: str | None = None) -> list[dict[str, object]]:
    code, out = _run(home, ws, "history", "search", "--json", query, url=url)
    assert code in (0, 1), out
    items: list[dict[str, object]] = json.loads(out)["items"]
    return items


def _answered(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each literal search on PostgreSQL was answered from the store's columns (True)
    or gave way to the walk over every row (False)."""
    from segue.postgres._backend import PostgresBackend

    answered: list[bool] = []
    own = PostgresBackend.people_search

    def recorded(self: PostgresBackend, query: str, *, context: int = 60) -> object:
        got = own(self, query, context=context)
        answered.append(got is not None)
        return got

    monkeypatch.setattr(PostgresBackend, "people_search", recorded)
    return answered


def test_the_literal_search_lists_lines_too_long_to_parse(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An item over 1 MiB is stored without being parsed, yet a person's views read it whole:
    the store's literal search lists it from its columns, as the files' search does."""
    layout = Layout(tmp_path, "ll")
    pad = "z " * (600 << 10)
    HistoryStore(layout, durable=False).append(
        [text_row("needle before", None, rid="a"), text_row(f"needle long {pad}", None, rid="L"),
         text_row("needle after", None, rid="b")]
    )
    _migrate(tmp_path, "ll", pg_url)
    expected = _literal(tmp_path, "ll", "needle")
    assert len(expected) == 3
    answered = _answered(monkeypatch)
    assert _literal(tmp_path, "ll", "needle", pg_url) == expected
    assert answered == [True]


def test_the_literal_search_names_the_window_a_long_reset_opens(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reset line over 1 MiB opens a window the store's ``window_id`` column never saw: the
    literal search gives way to the walk, and each hit names the window it is in."""
    _long_reset(tmp_path, "lw", pg_url)
    expected = _literal(tmp_path, "lw", "needle")
    assert len({h["windowId"] for h in expected}) == 2
    answered = _answered(monkeypatch)
    assert _literal(tmp_path, "lw", "needle", pg_url) == expected
    assert answered == [False]
