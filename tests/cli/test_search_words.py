"""`segue history search --words`: a person's ranked words search over the whole transcript
(R39), beside the literal, grep-like default."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest
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


def test_memory_stays_bounded_and_the_order_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every hit of a 1 MB history is long: the search holds a few numbers a hit and reads
    the hits again in batches (here of 100 kB of text), never every hit's text and terms
    at once; the listing is the same, best first, whatever the batches."""
    from segue._retrieval import people_words

    vocab = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "theta", "kappa", "lambda",
             "sigma", "omega", "parser"]
    rows = [
        make_row("user", f"needle {i} " + " ".join(
            f"{vocab[(i + j) % len(vocab)]}{j % 97}" for j in range(5000)
        ) + " parser" * (i % 7), id=f"n{i}")
        for i in range(25)
    ]
    HistoryStore(Layout(tmp_path, WS), durable=False).append(rows)
    whole = segue(tmp_path, "history", "search", "--words", "needle parser")
    assert whole.exit_code == 0, whole.output
    assert len(whole.output.splitlines()) == 25
    monkeypatch.setattr(people_words, "BATCH_CHARS", 100_000, raising=False)
    tracemalloc.start()
    try:
        batched = segue(tmp_path, "history", "search", "--words", "needle parser")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert batched.output == whole.output
    assert peak < 3_000_000, peak  # the hits' text alone is 1 MB; with their terms, far more


#: two answers alike, the older right after a question holding one of the query's words
ANSWERED = [
    make_row("user", "and your cat?", id="q"),
    make_row("assistant", "my cat is called Biscuit", id="biscuit"),
    make_row("user", "lunch", id="l"),
    make_row("assistant", "my cat is called Pepper", id="pepper"),
]


def answered_first(items: list[dict[str, object]]) -> None:
    """An answer gains a share of the hit on the line just before it, as the agent's search
    ranks (R39): alike otherwise, the newer would come first."""
    texts = [str(i["text"]) for i in items]
    assert sorted(texts) == ["and your cat?", "my cat is called Biscuit",
                             "my cat is called Pepper"], texts
    assert texts[0] == "my cat is called Biscuit", texts


@pytest.mark.parametrize("indexed", [False, True])
def test_an_answer_after_its_question_ranks_first(tmp_path: Path, indexed: bool) -> None:
    HistoryStore(Layout(tmp_path, WS), durable=False).append(ANSWERED)
    if indexed:
        assert segue(tmp_path, "history", "reindex").exit_code == 0
    got = segue(tmp_path, "history", "search", "--words", "--json", "cat called")
    assert got.exit_code == 0, got.output
    answered_first(json.loads(got.output)["items"])
