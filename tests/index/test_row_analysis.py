"""What a rebuild makes of a row's texts, the fast way, equals what the definitions make of
them, on any text (tests/index/test_literal_tokens.py covers the ``words`` text as a whole):

* a token's terms (:func:`segue.retrieval.words.token_terms`, cached per token) are the terms
  :func:`segue.retrieval.words.terms` finds for it, and a text's terms are its tokens';
* a term's stored token (:func:`segue.retrieval.index_words.stored_term`) is
  :mod:`segue.retrieval.ranking`'s;
* a row's ``lit`` text, its distinct chunks, holds exactly the FTS5 ``ascii`` tokens of its
  whole texts (and so the literal candidates are the same rows)."""

from __future__ import annotations

import sqlite3
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from segue.retrieval import ranking
from segue.retrieval.index_words import chunks, distinct_chunks, stored_term, words_and_chunks
from segue.retrieval.words import raw_tokens, terms, token_terms

_ALPHABET = "aAbBkKsSiIzZ09_-./\\:()[]{}\"' \n\té\u00c9ß\u212a\u017f\u0130\u0131→€日¼𝔘"
texts = st.text(alphabet=_ALPHABET, max_size=80)
words_ish = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCXYZ0123456789_.-/", max_size=80)


def _fts5_tokens(*texts_: str) -> set[str]:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(b, tokenize='ascii')")
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, row)")
    conn.executemany("INSERT INTO t (b) VALUES (?)", [(t,) for t in texts_])
    return {str(r[0]) for r in conn.execute("SELECT term FROM v")}


@settings(max_examples=300)
@given(st.one_of(texts, words_ish))
def test_a_texts_terms_are_its_tokens_terms(text: str) -> None:
    every: list[str] = []
    for token in raw_tokens(text):
        parts, wholes = token_terms(token)
        assert Counter(parts + wholes) == Counter(terms(token))
        every += parts + wholes
    assert Counter(every) == Counter(terms(text))


@settings(max_examples=300)
@given(st.text(max_size=30))
def test_a_terms_stored_token_is_the_rankings(term: str) -> None:
    assert stored_term(term) == ranking._token(term)


@settings(max_examples=300)
@given(texts, st.one_of(st.none(), texts))
def test_the_lit_text_holds_the_tokens_of_the_whole_texts(text: str, shown: str | None) -> None:
    words, cut = words_and_chunks(text)
    assert Counter(words.split()) == Counter(ranking.index_terms(text).split())
    if shown is not None:
        cut = cut + chunks(shown)
    found = distinct_chunks(cut)
    assert len(found) == len(set(found))
    whole = [text] if shown is None else [text, shown]
    assert _fts5_tokens("\n".join(found)) == _fts5_tokens(*whole)


def test_a_chunk_repeated_in_both_texts_is_stored_once() -> None:
    found = distinct_chunks(chunks("def parse_config(path):\n    return parse_config(path)")
                            + chunks("parse_config"))  # fmt: skip
    assert sorted(found) == [":", "def", "parse_config", "path", "return"]  # ":" joins
