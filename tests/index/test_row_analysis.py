"""What a rebuild makes of a row's words, the fast way, equals what the definitions make of
them, on any text (tests/index/test_literal_tokens.py covers the ``words`` text as a whole):

* a token's terms (:func:`segue._retrieval.words.token_terms`, cached per token) are the terms
  :func:`segue._retrieval.words.terms` finds for it, and a text's terms are its tokens';
* a term's stored token (:func:`segue._retrieval.index_words.stored_term`) is
  :mod:`segue._retrieval.ranking`'s."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from segue._retrieval import ranking
from segue._retrieval.index_words import stored_term
from segue._retrieval.words import raw_tokens, terms, token_terms

_ALPHABET = "aAbBkKsSiIzZ09_-./\\:()[]{}\"' \n\té\u00c9ß\u212a\u017f\u0130\u0131→€日¼𝔘"
texts = st.text(alphabet=_ALPHABET, max_size=80)
words_ish = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCXYZ0123456789_.-/", max_size=80)


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
