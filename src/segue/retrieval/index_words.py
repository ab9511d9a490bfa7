"""What a row gives the history index's search tables, fast: an item's ``words`` text and a
row's literal tokens (``lit``, ``lex``). Pure, with bounded caches.

The same as :func:`segue.retrieval.ranking.index_terms` and
:func:`segue.retrieval.index_literal.tokens` (tests/index/test_index_words.py checks both on
generated texts), computed the way an agent's transcript makes cheap, with no Python work
per token:

* The text is cut into *chunks* at every ASCII character that is neither a word character
  nor a joiner of :func:`~segue.retrieval.words.raw_tokens` (one ``bytes.translate`` and
  ``split``). No token of either analysis spans such a character, so a text's tokens are its
  chunks' tokens, in order.
* A transcript repeats its chunks (identifiers, paths, words) over and over: each distinct
  chunk is analysed once, into its ``words`` terms and its literal tokens, and a row is then
  a join of the cached analyses of its chunks (C-level ``map`` and ``join``).
* The ``words`` table ranks with ``bm25()`` alone (term frequency and document length, never
  positions), so the terms may come grouped by chunk rather than parts first.
"""

from __future__ import annotations

from collections.abc import Iterable

from segue.retrieval.index_literal import tokens
from segue.retrieval.ranking import index_terms

__all__ = ["chunks", "holds_long_token", "literal_tokens", "words_and_chunks"]

#: ASCII word characters and joiners kept, every other ASCII byte a space; bytes of
#: non-ASCII characters (>= 0x80) kept, so a chunk never splits a character
_CHUNK = bytes(
    c if (48 <= c <= 57 or 65 <= c <= 90 or 97 <= c <= 122 or c >= 128 or c in b"_./\\:-")
    else 32
    for c in range(256)
)
_MAX = 1 << 17  # cached chunks; emptied when full, so their memory stays bounded


class _Words(dict[bytes, str]):
    """chunk → its ``words`` text with a trailing space ("" when it has no term)."""

    def __missing__(self, chunk: bytes) -> str:
        if len(self) >= _MAX:
            self.clear()
        words = index_terms(chunk.decode("utf-8", "surrogatepass"))
        value = self[chunk] = words + " " if words else ""
        return value


class _Literal(dict[bytes, tuple[str, ...]]):
    """chunk → its literal tokens."""

    def __missing__(self, chunk: bytes) -> tuple[str, ...]:
        if len(self) >= _MAX:
            self.clear()
        value = self[chunk] = tuple(t.decode("utf-8", "surrogatepass") for t in tokens(
            chunk.decode("utf-8", "surrogatepass")))  # fmt: skip
        return value


_WORDS = _Words()
_LITERAL = _Literal()


def _chunks(text: str) -> list[bytes]:
    return text.encode("utf-8", "surrogatepass").translate(_CHUNK).split()


def words_and_chunks(text: str) -> tuple[str, set[bytes]]:
    """An item's ``words`` text (:func:`~segue.retrieval.ranking.index_terms`, its terms
    grouped by chunk) and its distinct chunks."""
    chunks = _chunks(text)
    return "".join(map(_WORDS.__getitem__, chunks)).rstrip(" "), set(chunks)


def chunks(text: str) -> set[bytes]:
    """The text's distinct chunks."""
    return set(_chunks(text))


def literal_tokens(found: Iterable[bytes]) -> set[str]:
    """The literal tokens (:func:`~segue.retrieval.index_literal.tokens`) of texts whose
    chunks are ``found``."""
    return set().union(*map(_LITERAL.__getitem__, found))


def holds_long_token(found: Iterable[bytes], limit: int) -> bool:
    """Whether a literal token of the ``found`` chunks is longer than ``limit`` characters
    (a chunk's bytes are at least as many as each of its tokens' characters)."""
    if max(map(len, found), default=0) <= limit:
        return False
    return any(len(t) > limit for c in found if len(c) > limit for t in _LITERAL[c])
