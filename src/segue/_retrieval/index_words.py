"""What a row gives the history index's search tables, fast: an item's ``words`` text and a
row's literal tokens (``lit``, ``lex``). Pure, with bounded caches.

The same as :func:`segue._retrieval.ranking.index_terms` and
:func:`segue._retrieval.index_literal.tokens` (tests/index/test_literal_tokens.py checks both on
generated texts), computed the way an agent's transcript makes cheap, with no Python work per
token:

* No token of either analysis spans a newline, so a text's tokens are its lines' tokens, in
  order; and an agent's transcript repeats its lines (file views, logs, test output, the same
  tool output in the agent's and in people's text). Each distinct line is analysed once and
  a row is a C-level ``map`` and ``join`` over its lines.
* A line is analysed by *chunks*, cut at every ASCII character that is neither a word
  character nor a joiner of :func:`~segue._retrieval.words.raw_tokens` (one
  ``bytes.translate`` and ``split``; no token spans such a character either). An agent's
  transcript repeats its identifiers, paths and words too, so each distinct chunk is
  analysed once, each distinct token of a chunk once
  (:func:`~segue._retrieval.words.token_terms`: a token's terms depend on it alone), and each
  term's stored token once.
* The ``words`` table ranks with ``bm25()`` alone (term frequency and document length, never
  positions), so the terms may come grouped by chunk rather than parts first.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from functools import lru_cache

from segue._retrieval.index_literal import tokens
from segue._retrieval.words import raw_tokens, token_terms

__all__ = [
    "holds_long_token",
    "line_tokens",
    "lines",
    "people_extra",
    "people_terms",
    "stored_term",
    "words_and_lines",
]

#: ASCII word characters and joiners kept, every other ASCII byte a space; bytes of
#: non-ASCII characters (>= 0x80) kept, so a chunk never splits a character
_CHUNK = bytes(
    c if (48 <= c <= 57 or 65 <= c <= 90 or 97 <= c <= 122 or c >= 128 or c in b"_./\\:-")
    else 32
    for c in range(256)
)
_MAX = 1 << 16  # chunks each chunk cache holds; emptied when full: its memory stays bounded
_MAX_TOKENS = 1 << 16  # tokens, and terms, the token caches hold (emptied when full too)
_BASE32 = "abcdefghijklmnopqrstuvwxyz234567"
_MAX_LINE = 4096  # a longer line is analysed every time it comes (never cached)
_MAX_CHARS = 8 << 20  # characters the line cache holds (lines and their terms)


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "surrogatepass")


def _chunks(text: str) -> list[bytes]:
    return text.encode("utf-8", "surrogatepass").translate(_CHUNK).split()


class _TokenWords(dict[str, tuple[str, str]]):
    """token (:func:`~segue._retrieval.words.raw_tokens`) → its ``words`` text: its parts'
    and its wholes' stored tokens (:func:`~segue._retrieval.ranking.index_terms`), each with
    a trailing space. A token's terms depend on the token alone, and a text's terms are its
    tokens' (:func:`~segue._retrieval.words.terms`: their parts, then their wholes)."""

    def __missing__(self, token: str) -> tuple[str, str]:
        if len(self) >= _MAX_TOKENS:
            self.clear()
        parts, wholes = token_terms(token)
        value = self[token] = "".join(map(_STORED.__getitem__, parts)), "".join(
            map(_STORED.__getitem__, wholes)
        )
        return value


class _Stored(dict[str, str]):
    """term → its stored token (:func:`~segue._retrieval.ranking.index_terms`) and a space."""

    def __missing__(self, term: str) -> str:
        if len(self) >= _MAX_TOKENS:
            self.clear()
        value = self[term] = stored_term(term) + " "
        return value


def stored_term(term: str) -> str:
    """What the ``words`` table stores for a term: 8 characters of ``[a-z2-7]`` naming it,
    the base32 of 40 bits of its BLAKE2b digest (the same as ``ranking._token``, without
    the standard library's pure-Python base32)."""
    raw = hashlib.blake2b(term.encode("utf-8", "surrogatepass"), digest_size=5).digest()
    n = int.from_bytes(raw, "big")
    pairs = _PAIRS
    return pairs[n >> 30] + pairs[(n >> 20) & 1023] + pairs[(n >> 10) & 1023] + pairs[n & 1023]


_PAIRS = tuple(a + b for a in _BASE32 for b in _BASE32)


class _ChunkWords(dict[bytes, str]):
    """chunk → its ``words`` text with a trailing space ("" when it has no term): its
    tokens' parts, then their wholes (the order :func:`~segue._retrieval.words.terms`
    gives)."""

    def __missing__(self, chunk: bytes) -> str:
        if len(self) >= _MAX:
            self.clear()
        found = list(map(_TOKEN_WORDS.__getitem__, raw_tokens(_decode(chunk))))
        if len(found) == 1:
            value = found[0][0] + found[0][1]
        else:
            value = "".join([p for p, _ in found] + [w for _, w in found])
        self[chunk] = value
        return value


class _ChunkTokens(dict[bytes, tuple[str, ...]]):
    """chunk → its literal tokens."""

    def __missing__(self, chunk: bytes) -> tuple[str, ...]:
        if len(self) >= _MAX:
            self.clear()
        value = self[chunk] = tuple(_decode(t) for t in tokens(_decode(chunk)))
        return value


class _LineWords(dict[str, str]):
    """line → its ``words`` text, each term followed by a space. Bounded by the characters
    it holds (lines and their terms), not only by its entries."""

    held = 0

    def __missing__(self, line: str) -> str:
        value = "".join(map(_CHUNK_WORDS.__getitem__, _chunks(line)))
        if len(line) <= _MAX_LINE:
            if self.held > _MAX_CHARS:
                self.clear()
                self.held = 0
            self[line] = value
            self.held += len(line) + len(value)
        return value


_STORED = _Stored()
_TOKEN_WORDS = _TokenWords()
_CHUNK_WORDS = _ChunkWords()
_CHUNK_TOKENS = _ChunkTokens()
_LINE_WORDS = _LineWords()


def lines(text: str) -> list[str]:
    """The text's lines (the unit the line cache holds; a row's ``lit`` text holds each
    distinct one once)."""
    return text.split("\n")


def words_and_lines(text: str) -> tuple[str, list[str]]:
    """An item's ``words`` text (:func:`~segue._retrieval.ranking.index_terms`, its terms
    grouped by chunk) and its lines."""
    found = lines(text)
    return "".join(map(_LINE_WORDS.__getitem__, found)).rstrip(" "), found


def people_terms(
    words: str | None, shown: str, *, same: bool, agent_lines: Iterable[str] = ()
) -> tuple[int, str | None]:
    """``rows.plen`` and the ``pwords`` text (index_ddl.py) of a row people see as ``shown``
    (``same``: the agent's text, whose ``words`` text is ``words`` when it is an item, made
    of the lines ``agent_lines``): its number of terms, and its distinct terms that ``words``
    lacks (None: none). The same as :func:`people_extra`, without analysing the lines people
    share with the agent again: a shared line's terms are all in ``words``, and every stored
    term is :data:`_TERM_WIDTH` characters with its space, so a text's number of terms is its
    length over that."""
    if same and words is not None:
        return (words.count(" ") + 1 if words else 0), None
    found = lines(shown)
    spelled = list(map(_LINE_WORDS.__getitem__, found))
    plen = sum(map(len, spelled)) // _TERM_WIDTH
    agent = set(agent_lines) if words else set()
    own = [t for line, t in zip(found, spelled, strict=True) if t and line not in agent]
    if not own:
        return plen, None
    extra = set("".join(own).split())
    if words:
        if len(extra) <= _FEW:
            # a substring search each, instead of a set of every term: terms hold no space
            # and are all as long, so a term is in ``words`` only as one of its terms
            extra = {t for t in extra if t not in words}
        else:
            extra.difference_update(words.split())
    return plen, " ".join(sorted(extra)) if extra else None


#: a stored term's characters and the space after it (:func:`stored_term`)
_TERM_WIDTH = 9
#: distinct terms of people's own lines looked up one by one in the agent's ``words`` text
_FEW = 32


def people_extra(shown: str, agent: Iterable[str]) -> tuple[int, set[str]]:
    """A text people see as ``shown``: its number of terms, and its distinct terms that are
    not among the agent's terms ``agent``. Both stores' people's columns are made of these."""
    found = words_and_lines(shown)[0].split()
    extra = set(found)
    extra.difference_update(agent)
    return len(found), extra


def line_tokens(found: Iterable[str]) -> frozenset[str]:
    """The literal tokens (:func:`~segue._retrieval.index_literal.tokens`) of the lines."""
    every = set(_chunks("\n".join(found)))
    return frozenset().union(*map(_CHUNK_TOKENS.__getitem__, every))


def holds_long_token(found: list[str], limit: int) -> bool:
    """Whether a literal token of the lines is longer than ``limit`` characters. A line is at
    least as long as each of its tokens, so only long ones are looked into: by a regular
    expression for a run of more than ``limit`` token characters (ASCII letters and digits,
    non-ASCII characters), with no copy of the line."""
    if max(map(len, found), default=0) <= limit:
        return False
    run = _long_run(limit).search
    return any(run(line) is not None for line in found if len(line) > limit)


@lru_cache(maxsize=4)
def _long_run(limit: int) -> re.Pattern[str]:
    return re.compile("[0-9A-Za-z\u0080-\U0010ffff]{" + str(limit + 1) + "}")


def long_token_windows(found: list[str], limit: int) -> list[str]:
    """Stand-ins for the literal tokens of the lines longer than ``limit`` characters, which
    ``lex`` does not keep: each such token's windows of ``limit`` characters, starting every
    ``limit // 2`` characters, and its last ``limit`` characters. A piece of at most
    ``limit // 2`` characters inside a long token lies wholly inside one window, a prefix or
    suffix of at most ``limit`` inside the first or the last, so the row holding the token
    holds a ``lex`` token that picks it out (index_query: only longer pieces still need every
    such row read)."""
    half = limit // 2
    out: list[str] = []
    for line in found:
        if len(line) <= limit:
            continue
        for raw in tokens(line):
            if len(raw) <= limit:  # bytes: at least as many as characters
                continue
            token = raw.decode("utf-8", "surrogatepass")
            if len(token) <= limit:
                continue
            out.extend(token[i : i + limit] for i in range(0, len(token) - limit + 1, half))
            out.append(token[-limit:])
    return out
