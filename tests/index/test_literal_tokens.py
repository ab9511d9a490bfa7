"""The index's literal search answers from tokens (SPEC.md §7 "word candidates verified
against the text"), so its three analyses must agree exactly, on any text:

* :func:`segue._retrieval.index_literal.tokens` (what ``lex`` holds) and FTS5's own ``ascii``
  tokenizer (what ``lit`` holds);
* :mod:`segue._retrieval.index_words` (the fast path a rebuild takes) and the definitions it
  stands for, :func:`segue._retrieval.ranking.index_terms` and ``tokens``, people's terms
  included (``rows.plen`` and ``pwords``);

and a literal search through the index must find exactly what the scan finds, also for a
query inside a token, across tokens, or one no token narrows."""

from __future__ import annotations

import sqlite3
import tempfile
from collections import Counter
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from segue._retrieval import SessionHistoryTool
from segue._retrieval.index_build import rebuild
from segue._retrieval.index_literal import Need, pieces, tokens
from segue._retrieval.index_words import (
    holds_long_token,
    line_tokens,
    lines,
    people_terms,
    words_and_lines,
)
from segue._retrieval.ranking import index_terms
from segue._workspace import Layout
from tests.retrieval.helpers import encoded, entries, text_row, write_history

# code, paths, punctuation, case, digits, non-ASCII letters and symbols, the letters that
# re.IGNORECASE folds onto ASCII from outside it
_ALPHABET = "aAbBkKsSiIzZ09_-./\\:()[]{}\"' \n\té\u00c9ß\u212a\u017f\u0130\u0131→€日"
texts = st.text(alphabet=_ALPHABET, max_size=60)


def _fts5_tokens(text: str) -> set[str]:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(b, tokenize='ascii')")
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, row)")
    conn.execute("INSERT INTO t (b) VALUES (?)", (text,))
    return {str(r[0]) for r in conn.execute("SELECT term FROM v")}


@settings(max_examples=300)
@given(texts)
def test_tokens_are_fts5_ascii_tokens(text: str) -> None:
    assert {t.decode() for t in tokens(text)} == _fts5_tokens(text)


@settings(max_examples=300)
@given(st.lists(texts, max_size=4), st.lists(texts, max_size=4), st.booleans())
def test_peoples_terms_equal_their_definition(agent: list[str], own: list[str], item: bool) -> None:
    # people mostly see the agent's lines, with some of their own (a tool call's input)
    text, shown = "\n".join(agent), "\n".join(agent[: len(agent) // 2] + own + agent[1:])
    words = words_and_lines(text)[0] if item else None
    spelled = index_terms(shown).split()
    extra = set(spelled) - set(words.split() if words else ())
    want = (len(spelled), " ".join(sorted(extra)) or None)
    assert people_terms(words, shown, same=False, agent_lines=lines(text) if item else ()) == want
    if words is not None and shown == text:
        assert people_terms(words, shown, same=True) == (len(spelled), None)


def test_peoples_terms_with_many_of_their_own() -> None:
    agent = "\n".join(f"w{i} shared line" for i in range(40))
    shown = agent + "\n" + " ".join(f"own{i} w{i}" for i in range(80))  # > 32 terms of its own
    words = words_and_lines(agent)[0]
    spelled = index_terms(shown).split()
    extra = sorted(set(spelled) - set(words.split()))
    assert len(extra) > 100  # own0 … own79 and their parts, w40 … w79 (w0 … w39: the agent's)
    assert people_terms(words, shown, same=False, agent_lines=lines(agent)) == (
        len(spelled), " ".join(extra))


@settings(max_examples=300)
@given(st.lists(texts, min_size=1, max_size=3).map("\n".join))
def test_the_fast_analysis_equals_its_definitions(text: str) -> None:
    words, found = words_and_lines(text)
    assert found == lines(text)
    assert Counter(words.split()) == Counter(index_terms(text).split())
    want = {t.decode() for t in tokens(text)}
    assert line_tokens(found) == line_tokens(set(found)) == want
    longest = max(map(len, want), default=0)
    for limit in {0, 1, 3, max(0, longest - 1), longest}:
        assert holds_long_token(found, limit) == (longest > limit)


@settings(max_examples=300)
@given(texts, st.integers(0, 60), st.integers(1, 12))
def test_every_piece_of_a_substring_is_in_a_token(text: str, at: int, size: int) -> None:
    """The reasoning of index_literal.py on its own: for any substring of any text (risky
    letters aside), each piece names a token of the text as its need says."""
    query = text[at : at + size]
    if not query or any(c in query + text for c in "\u212a\u017f\u0130\u0131"):
        return
    held = {t.decode() for t in tokens(text)}
    for piece in pieces(query):
        assert any(_fits(t, piece.text, piece.need) for t in held), (query, piece, held)


_WORDS = ["zebracorn-4471", "AttributeError", "numpy_handler.py", "parseConfig(x)",
          "src/a/b.py:12", "café au lait", "ERR_CONNECTION_RESET", "\u212aelvin", "x"]  # fmt: skip
_QUERIES = ["racorn", "corn-44", "bracorn-4471", "4471", "tributeErr", "error", "_handler.",
            "handler.py", "Config(", "a/b.py:1", "é au l", "au", "CONNECTION", "kelvin", "x",
            "ſ", "zz", "-", "py:12", "RESET!"]  # fmt: skip


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(_WORDS), min_size=1, max_size=6).map(" ".join),
       st.lists(st.sampled_from(_QUERIES), min_size=1, max_size=4))  # fmt: skip
def test_literal_search_finds_what_the_scan_finds(texts_: str, queries: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        layout = Layout(Path(tmp), "ws")
        rows = [text_row(f"{w} row{i}", i) for i, w in enumerate(texts_.split(" "))]
        rows.append(text_row(texts_, len(rows)))
        write_history(layout, [], encoded(rows))
        rebuild(layout)
        indexed = SessionHistoryTool(layout, build_index=False)
        scan = SessionHistoryTool(layout, use_index=False)
        for query in queries:
            args = {"action": "search", "match": "literal", "query": query, "limit": 25}
            got = entries(indexed, args)
            assert indexed.index_problem is None
            assert got == entries(scan, args), query


def test_pieces_inside_and_across_tokens_are_found_reading_only_their_rows(
    tmp_path: Path,
) -> None:
    """Among 1,500 rows, a query inside a token, or across tokens, is answered in one call
    that re-reads only the rows holding its pieces (not the 500 a scan would read), and
    finds what the scan finds."""
    layout = Layout(tmp_path, "ws")
    rows = [text_row(f"plain row {i} with ordinary words", i) for i in range(1500)]
    for i, w in zip(range(100, 1500, 150), _WORDS, strict=False):
        rows[i] = text_row(f"row {i}: {w} here", i)
    write_history(layout, encoded(rows[:700]), encoded(rows[700:]))
    rebuild(layout)
    tool = SessionHistoryTool(layout, build_index=False)
    scan = SessionHistoryTool(layout, use_index=False)
    for query in ["racorn", "corn-44", "tributeErr", "_handler.", "é au l", "kelvin",
                  "CONNECTION_RES", "b.py:1"]:  # fmt: skip
        args = {"action": "search", "match": "literal", "query": query, "limit": 25}
        page = tool.call(args)
        assert tool.index_problem is None
        assert page["items"] and page["nextCursor"] is None, query
        assert page["scanned"]["rows"] <= 5, (query, page["scanned"])
        assert page["items"] == entries(scan, args), query


def test_a_query_inside_a_token_too_long_for_the_lexicon_is_found(tmp_path: Path) -> None:
    """``lex`` keeps tokens of at most LEX_MAX characters; a row holding a longer one (a
    digest, base64, a minified line) is always a candidate, so a piece inside it is found."""
    layout = Layout(tmp_path, "ws")
    blob = "a" * 200 + "NeedleInBlob" + "b" * 200
    rows = [text_row(f"plain {i}", i) for i in range(30)] + [text_row(f"data {blob}", 30)]
    write_history(layout, [], encoded(rows))
    rebuild(layout)
    for query in ["needleinblob", "aaNeedle", "Blobbb"]:
        args = {"action": "search", "match": "literal", "query": query}
        got = entries(SessionHistoryTool(layout, build_index=False), args)
        assert [i["itemId"] for i in got] == ["30"], query
        assert got == entries(SessionHistoryTool(layout, use_index=False), args)


def test_a_long_line_of_separators_holds_no_long_token() -> None:
    assert not holds_long_token([" " * 300, "(" * 300, "x"], 256)
    assert holds_long_token(["(" * 300 + "y" * 257], 256)


def _fits(token: str, piece: str, need: Need) -> bool:
    """Whether ``token`` holds ``piece`` as ``need`` asks."""
    if need == Need.EXACT:
        return token == piece
    if need == Need.PREFIX:
        return token.startswith(piece)
    if need == Need.SUFFIX:
        return token.endswith(piece)
    return piece in token
