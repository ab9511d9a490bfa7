"""`segue history search --words`: a person's ranked words search over the whole transcript
(R39), beside the literal, grep-like default."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from segue import HistoryStore, Layout, make_row
from tests.front import cli

WS = "words"


def segue(home: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--home", str(home), "-w", WS, *args])


def _home(tmp_path: Path) -> Path:
    rows = [
        make_row("user", "the deploy failed: disk quota exceeded on the build runner", id="a"),
        make_row("assistant", "I will parse the configs again", id="b"),
        make_row("user", "lunch", id="c"),
        make_row("assistant", "deploying tomorrow", id="d"),
    ]
    HistoryStore(Layout(tmp_path, WS), durable=False).append(rows)
    return tmp_path


def test_words_rank_and_literal_stays_the_default(tmp_path: Path) -> None:
    home = _home(tmp_path)
    ranked = segue(home, "history", "search", "--words", "--json", "deploys quota")
    assert ranked.exit_code == 0, ranked.output
    texts = [i["text"] for i in json.loads(ranked.output)["items"]]
    assert texts[0].startswith("the deploy failed") and len(texts) == 2
    literal = segue(home, "history", "search", "deploys quota")
    assert literal.exit_code == 1  # no item holds that exact text
    stemmed = segue(home, "history", "search", "--words", "parsing config")
    assert stemmed.exit_code == 0 and "parse the configs" in stemmed.output
    none = segue(home, "history", "search", "--words", "dinner")
    assert none.exit_code == 1


def test_a_query_without_words_is_a_clear_error(tmp_path: Path) -> None:
    got = segue(_home(tmp_path), "history", "search", "--words", "!!!")
    assert got.exit_code == 2
    assert got.output.strip().startswith("segue: error:") and "Traceback" not in got.output
