"""The fast path of ``segue history search`` (segue._cli.quick_search) prints exactly what the
full command prints, with the same exit code, and really runs without click.

Each case runs two real processes: ``python -m segue`` (the console entry, which tries the
fast path first) and ``python -m segue._cli.main`` (click only), and compares their bytes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from segue import HistoryStore, Layout, make_row
from segue._cli.context import resolve
from segue._cli.quick_search import parse
from segue._retrieval.index_build import rebuild
from segue._retrieval.index_file import index_path
from tests.test_views import session_rows

WS = "quick"


def run(args: list[str], *, entry: str, cwd: Path | None = None) -> tuple[int, bytes, bytes]:
    done = subprocess.run(
        [sys.executable, "-m", entry, *args], capture_output=True, cwd=cwd, timeout=60, check=False
    )
    return done.returncode, done.stdout, done.stderr


def same(args: list[str], cwd: Path | None = None) -> tuple[int, bytes, bytes]:
    fast = run(args, entry="segue", cwd=cwd)
    full = run(args, entry="segue._cli.main", cwd=cwd)
    assert fast == full, args
    return fast


def took_fast_path(args: list[str], cwd: Path | None = None) -> bool:
    """Whether the console entry answered ``args`` without importing click."""
    code = (
        "import sys\n"
        "from segue._cli.entry import main\n"
        f"rc = main({args!r})\n"
        "print('click' in sys.modules, file=sys.stderr)\n"
        "sys.exit(rc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, timeout=60, cwd=cwd, check=False
    )
    return done.stderr.decode().splitlines()[-1] == "False"


@pytest.fixture
def indexed(segue_home: Path) -> Layout:
    layout = Layout(segue_home, WS)
    HistoryStore(layout, durable=False).append(session_rows(with_sequences=False))
    rebuild(layout)
    return layout


QUERIES = [
    "entry point",  # two windows
    "ENTRY",  # case-insensitive
    "pasted-log",  # a rejected row, shown to people
    "zz-no-such-text",  # no match
    "ß",  # under three characters: the candidate rows are scanned (none holds it)
    "Continuing",
]


NO_MATCH = {"zz-no-such-text", "ß"}


@pytest.mark.parametrize("query", QUERIES)
def test_same_output_and_exit_code_as_the_full_command(indexed: Layout, query: str) -> None:
    home = str(indexed.home)
    args = ["--home", home, "-w", WS, "history", "search", query]
    code, out, _ = same(args)
    # Exit status as grep's: 1 when nothing matches, on both paths.
    assert code == (1 if query in NO_MATCH else 0)
    # In a pipe the output is the hits alone, like grep's: no banner, no count.
    assert (out == b"") == (query in NO_MATCH)
    assert all(line.startswith(b"#") for line in out.splitlines()), out
    same([*args, "--json"])
    same(["--home=" + home, "--workspace=" + WS, "history", "search", "--json", query])
    assert took_fast_path(args)


def test_the_index_answers_on_the_fast_path(indexed: Layout) -> None:
    args = ["--home", str(indexed.home), "-w", WS, "history", "search", "entry point", "--json"]
    assert took_fast_path(args)
    _, out, _ = same(args)
    ids = [item["itemId"] for item in json.loads(out)["items"]]
    assert len(ids) == 2, out


def test_rows_appended_after_the_index_are_found(indexed: Layout) -> None:
    HistoryStore(indexed, durable=False).append([make_row("user", "a late entry point", id="z")])
    args = ["--home", str(indexed.home), "-w", WS, "history", "search", "entry point"]
    _, out, _ = same(args)
    assert len(out.splitlines()) == 3  # one line per hit
    assert took_fast_path(args)


def test_without_a_trusted_index_the_full_command_scans(indexed: Layout) -> None:
    args = ["--home", str(indexed.home), "-w", WS, "history", "search", "entry point"]
    index_path(indexed).write_bytes(b"not a database")
    _, out, _ = same(args)
    assert len(out.splitlines()) == 2
    assert not took_fast_path(args)
    index_path(indexed).unlink()
    same(args)
    assert not took_fast_path(args)


def test_settings_are_read_as_the_full_command_reads_them(indexed: Layout) -> None:
    settings_file = indexed.home / "settings.json"
    args = ["--home", str(indexed.home), "-w", WS, "history", "search", "entry"]
    settings_file.write_text('{"model": "openai:gpt-4o"}')
    same(args)
    assert took_fast_path(args)
    settings_file.write_text("{not json")
    code, _, err = same(args)
    assert code == 2 and err.startswith(b"segue: error:")  # a bad setting is bad usage
    settings_file.write_text('{"store": {"url": "postgresql://nobody@127.0.0.1:1/none"}}')
    assert not took_fast_path(args)  # PostgreSQL answers through the full command


def test_other_spellings_and_bad_input_go_to_the_full_command(indexed: Layout) -> None:
    home = str(indexed.home)
    for args in (
        ["--home", home, "-w", "bad id!", "history", "search", "entry"],
        ["--home", home, "-w", WS, "history", "search"],
        ["--home", home, "-w", WS, "history", "search", "a", "b"],
        ["--home", home, "-w", WS, "history", "search", ""],
        ["--home", home, "-w", WS, "history", "search", "--", "-entry"],
        ["--home", home, "-w", WS, "history", "search", "--help"],
        ["--home", str(indexed.session_dir / "chat.jsonl"), "history", "search", "entry"],
    ):
        same(args)
        assert not took_fast_path(args), args


def test_the_default_workspace_is_derived_as_the_full_command_derives_it(
    segue_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No --home, no -w: $SEGUE_HOME and the workspace of the current directory."""
    work = tmp_path / "project" / "sub"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    layout = resolve(None, None, None).layout
    assert layout.home == segue_home
    HistoryStore(layout, durable=False).append(session_rows(with_sequences=False))
    rebuild(layout)
    args = ["history", "search", "entry point"]
    _, out, _ = same(args, cwd=work)
    assert len(out.splitlines()) == 2
    _, doc, _ = same([*args, "--json"], cwd=work)
    assert f"workspace {layout.workspace_id}:" in json.loads(doc)["scope"]
    assert took_fast_path(args, cwd=work)


_WORDS = ["--home", "--home=h", "-w", "--workspace", "--workspace=w", "-wx", "w", "h", "-h",
          "--help", "--", "q", "-q", "", "--store", "x=y", "--json", "history", "search"]
_OPTIONS = st.lists(
    st.sampled_from([["--home", "h"], ["--home=h2"], ["-w", "w"], ["--workspace", "w2"],
                     ["--workspace=w3"], ["-w", "-x"], ["--store", "s"], ["-wx"], ["--home="]]),
    max_size=3,
).map(lambda pairs: [word for pair in pairs for word in pair])


@st.composite
def _search_args(draw: st.DrawFn) -> list[str]:
    """Mostly well-formed ``[options] history search ...`` lists, some subtly not."""
    command = draw(st.sampled_from([["history", "search"]] * 4 + [["history"], ["search"]]))
    tail = draw(st.lists(st.sampled_from(["--json", "q", "-q", "--", "", "-h", "r"]), max_size=2))
    where = draw(st.integers(0, len(tail)))
    tail.insert(where, draw(st.sampled_from(["q", "Q x", "é", "history"])))
    return [*draw(_OPTIONS), *command, *tail]


_ARGS = st.one_of(st.lists(st.sampled_from(_WORDS), max_size=8), _search_args())


@settings(max_examples=300, deadline=None)
@given(_ARGS)
def test_the_fast_path_reads_an_argument_list_as_click_does(args: list[str]) -> None:
    """Whatever the fast path accepts, click reads the same way: the same home, workspace,
    query and --json (and the fast path refuses what it is not sure of)."""
    parsed = parse(args)
    if parsed is None:
        return
    from segue._cli.main import cli

    root = cli.make_context("segue", list(args))
    name, command, rest = cli.resolve_command(root, [*root._protected_args, *root.args])
    assert name == "history" and command is not None
    assert isinstance(command, click.Group)
    history = command.make_context("history", list(rest), parent=root)
    sub, search, words = command.resolve_command(
        history, [*history._protected_args, *history.args]
    )
    assert sub == "search" and search is not None
    params = search.make_context("search", list(words), parent=history).params
    home, workspace, query, as_json = parsed
    assert (home, workspace) == (root.params["home"], root.params["workspace_id"])
    assert (query, as_json) == (params["query"], params["as_json"])
