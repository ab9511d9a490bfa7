"""What a row gives the history index's search tables, fast: an item's ``words`` text and a
row's literal tokens (``lit``, ``lex``). Pure, with bounded caches.

The same as :func:`segue.retrieval.ranking.index_terms` and
:func:`segue.retrieval.index_literal.tokens` (tests/index/test_literal_tokens.py checks both on
generated texts), computed the way an agent's transcript makes cheap, with no Python work per
token:

* No token of either analysis spans a newline, so a text's tokens are its lines' tokens, in
  order; and an agent's transcript repeats its lines (file views, logs, test output, the same
  tool output in the agent's and in people's text). Each distinct line is analysed once and
  a row is a C-level ``map`` and ``join`` over its lines.
* A line is analysed by *chunks*, cut at every ASCII character that is neither a word
  character nor a joiner of :func:`~segue.retrieval.words.raw_tokens` (one
  ``bytes.translate`` and ``split``; no token spans such a character either), and each
  distinct chunk (identifiers, paths, words) is analysed once too.
* The ``words`` table ranks with ``bm25()`` alone (term frequency and document length, never
  positions), so the terms may come grouped by chunk rather than parts first.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from segue.retrieval.index_literal import tokens
from segue.retrieval.ranking import index_terms

__all__ = ["line_tokens", "lines", "longest_token", "words_and_lines"]

#: ASCII word characters and joiners kept, every other ASCII byte a space; bytes of
#: non-ASCII characters (>= 0x80) kept, so a chunk never splits a character
_CHUNK = bytes(
    c if (48 <= c <= 57 or 65 <= c <= 90 or 97 <= c <= 122 or c >= 128 or c in b"_./\\:-")
    else 32
    for c in range(256)
)
_MAX = 1 << 16  # entries of each cache; emptied when full, so their memory stays bounded
_MAX_LINE = 4096  # a longer line is analysed every time it comes (never cached)


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "surrogatepass")


def _chunks(text: str) -> list[bytes]:
    return text.encode("utf-8", "surrogatepass").translate(_CHUNK).split()


class _ChunkWords(dict[bytes, str]):
    """chunk → its ``words`` text with a trailing space ("" when it has no term)."""

    def __missing__(self, chunk: bytes) -> str:
        if len(self) >= _MAX:
            self.clear()
        words = index_terms(_decode(chunk))
        value = self[chunk] = words + " " if words else ""
        return value


class _ChunkTokens(dict[bytes, tuple[str, ...]]):
    """chunk → its literal tokens."""

    def __missing__(self, chunk: bytes) -> tuple[str, ...]:
        if len(self) >= _MAX:
            self.clear()
        value = self[chunk] = tuple(_decode(t) for t in tokens(_decode(chunk)))
        return value


_CHUNK_WORDS = _ChunkWords()
_CHUNK_TOKENS = _ChunkTokens()


_V = TypeVar("_V")


class _LineCache(dict[str, _V]):
    def _keep(self, line: str, value: _V) -> _V:
        if len(line) <= _MAX_LINE:
            if len(self) >= _MAX:
                self.clear()
            self[line] = value
        return value


class _LineWords(_LineCache[str]):
    """line → its ``words`` text, each term followed by a space."""

    def __missing__(self, line: str) -> str:
        return self._keep(line, "".join(map(_CHUNK_WORDS.__getitem__, _chunks(line))))


class _LineTokens(_LineCache[frozenset[str]]):
    """line → its distinct literal tokens."""

    def __missing__(self, line: str) -> frozenset[str]:
        found = frozenset().union(*map(_CHUNK_TOKENS.__getitem__, set(_chunks(line))))
        return self._keep(line, found)


class _LineLongest(_LineCache[int]):
    """line → the length of its longest literal token (0: none)."""

    def __missing__(self, line: str) -> int:
        return self._keep(line, max(map(len, _LINE_TOKENS[line]), default=0))


_LINE_WORDS = _LineWords()
_LINE_TOKENS = _LineTokens()
_LINE_LONGEST = _LineLongest()


def lines(text: str) -> list[str]:
    """The text's lines (the unit the caches hold)."""
    return text.split("\n")


def words_and_lines(text: str) -> tuple[str, list[str]]:
    """An item's ``words`` text (:func:`~segue.retrieval.ranking.index_terms`, its terms
    grouped by chunk) and its lines."""
    found = lines(text)
    return "".join(map(_LINE_WORDS.__getitem__, found)).rstrip(" "), found


def line_tokens(found: Iterable[str]) -> frozenset[str]:
    """The literal tokens (:func:`~segue.retrieval.index_literal.tokens`) of the lines."""
    return frozenset().union(*map(_LINE_TOKENS.__getitem__, found))


def longest_token(found: Iterable[str]) -> int:
    """The length of the longest literal token of the lines (0: none)."""
    return max(map(_LINE_LONGEST.__getitem__, found), default=0)
