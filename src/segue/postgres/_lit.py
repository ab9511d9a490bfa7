"""The PostgreSQL store's literal search (R23) without a trigram index: every row's literal
tokens, and what a query asks of them. Pure.

The design is the history index's (``retrieval.index_literal``, ``index_ddl`` schema 5):

* **Tokens.** A row's ``lit`` column is a ``tsvector`` of the distinct literal tokens
  (:func:`segue._retrieval.index_literal.tokens`: maximal runs of ASCII letters and digits
  and non-ASCII characters, ASCII lower-cased) of the agent's projected text and of people's
  displayed text. So every hit of a query in a row holds, for each of the query's pieces
  (``index_literal.pieces``), a token of the kind the piece asks for, unless the row is
  *risky* (always a candidate): its text holds one of the four characters
  ``re.IGNORECASE`` matches to an ASCII letter (K ſ İ ı), or a lone surrogate (its tokens
  are stored with U+FFFD), or more tokens than a column holds. Lexemes carry no position
  and are always quoted, so no character needs escaping.
* **Long tokens.** A token longer than :data:`LEX_MAX` characters is kept as its overlapping
  windows (``index_words.long_token_windows``: :data:`LEX_MAX` characters every half of
  that, and the last :data:`LEX_MAX`), and the row is marked ``longtok``: a piece of at most
  half a window inside such a token lies inside one window, a prefix or suffix of at most a
  window inside the first or the last; the ``longtok`` rows are candidates of every query
  with a longer piece (:func:`long_piece`: the history index's rule, and also for a whole
  token longer than a window, which the vocabulary holds only as windows).
* **Vocabulary.** ``segue_lex`` holds every workspace's distinct lexemes, with an index over
  each one's trigrams: a prefix piece is a range of it, a suffix or inside piece the terms
  holding its trigrams. :func:`tsquery` ORs the terms a piece picks out and ANDs the pieces.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from segue._retrieval.index_ddl import LEX_MAX
from segue._retrieval.index_literal import Need, Piece
from segue._retrieval.index_words import line_tokens, lines, long_token_windows

__all__ = ["LEX_MAX", "MAX_LIT", "Lit", "fold", "grams", "lit_of", "long_piece", "tsquery"]

_SURROGATE = re.compile("[\ud800-\udfff]")
#: non-ASCII characters ``re.IGNORECASE`` matches to an ASCII letter (K, ſ, İ, ı)
_RISKY = re.compile("[\u212a\u017f\u0130\u0131]")
#: the largest ``lit`` column stored (a ``tsvector`` holds at most 1 MiB); a row with more
#: is ``risky``: always a candidate, matched on its text
MAX_LIT = 512 << 10


def _fold_char(c: str) -> str:
    up = c.upper()
    low = (up if len(up) == 1 else c).lower()
    return low[0] if low else c


class _FoldTable(dict[int, int]):
    """code point -> its folded code point, filled as characters come (``str.translate``)."""

    def __missing__(self, code: int) -> int:
        c = chr(code)
        value = self[code] = ord(c.lower() if c.isascii() else _fold_char(c))
        return value


_FOLD = _FoldTable()


def fold(text: str) -> str:
    """One code point per code point, case folded so that characters ``re.IGNORECASE``
    treats as equal (``K``/``k``/Kelvin sign, ``ſ``/``s``, ``İ``/``i``) fold alike."""
    if text.isascii():  # the common case, and the same answer as the table
        return text.lower()
    return text.translate(_FOLD)


class Lit:
    """A row's literal tokens: ``terms`` (storable), ``vector`` their ``tsvector`` (None
    when it would not fit a column), ``long``: a token was kept as windows, ``risky``: the
    row must always be a candidate (module docstring)."""

    __slots__ = ("long", "risky", "terms", "vector")

    def __init__(self, terms: frozenset[str], long: bool, risky: bool) -> None:
        self.terms = terms
        text = " ".join(["'" + t + "'" for t in sorted(terms)])  # one spelling for a set
        # PostgreSQL bounds a tsvector's lexemes in bytes: a non-ASCII token takes up to 4
        fits = len(text) <= MAX_LIT and (text.isascii() or len(text.encode()) <= MAX_LIT)
        self.vector: str | None = text if fits else None
        self.risky = risky or self.vector is None
        self.long = long and not self.risky  # a risky row is a candidate anyway


EMPTY = Lit(frozenset(), False, False)


def _risky(text: str) -> bool:
    # str.isascii() reads a flag CPython keeps: most rows never reach the search
    return not text.isascii() and _RISKY.search(text) is not None


class _LineTokens(dict[str, frozenset[str]]):
    """line -> its literal tokens (an agent's transcript repeats its lines: file views, logs,
    the same output in the agent's and in people's text). Bounded by the characters of the
    lines it holds."""

    held = 0

    def __missing__(self, line: str) -> frozenset[str]:
        value = line_tokens((line,))
        if len(line) <= _MAX_LINE:
            if self.held > _MAX_CHARS:
                self.clear()
                self.held = 0
            self[line] = value
            self.held += len(line)
        return value


_MAX_LINE = 4096  # a longer line is tokenized every time it comes
_MAX_CHARS = 8 << 20
_LINE_TOKENS = _LineTokens()


def lit_of(texts: Iterable[str | None], split_first: list[str] | None = None) -> Lit:
    """The literal tokens of the texts together (None: no text); ``split_first``: the first
    text's :func:`~segue._retrieval.index_words.lines`, when the caller has them."""
    found: set[str] = set()
    long = risky = False
    for i, text in enumerate(texts):
        if not text:
            continue
        risky = risky or _risky(text)
        split = split_first if i == 0 and split_first is not None else lines(text)
        tokens = frozenset().union(*map(_LINE_TOKENS.__getitem__, split))
        if tokens and max(map(len, tokens)) > LEX_MAX:
            long = True
            found.update(t for t in tokens if len(t) <= LEX_MAX)
            found.update(long_token_windows(split, LEX_MAX))
        else:
            found.update(tokens)
    if not found:
        return Lit(frozenset(), False, risky)
    if not all(map(str.isascii, found)):
        stored = {_SURROGATE.sub("\ufffd", t) for t in found}
        risky = risky or stored != found
        found = stored
    return Lit(frozenset(found), long, risky)


def grams(text: str) -> list[str]:
    """The distinct trigrams of ``text`` (what the vocabulary's index holds of a term)."""
    return list(dict.fromkeys(text[i : i + 3] for i in range(len(text) - 2)))


def long_piece(pieces: Iterable[Piece]) -> bool:
    """Whether the ``longtok`` rows are candidates too: a piece that is not a whole token,
    longer than the half window every piece inside a token lies wholly inside, or a whole
    token longer than a window (the vocabulary holds only its windows)."""
    return any(
        len(p.text) > (LEX_MAX if p.need is Need.EXACT else LEX_MAX // 2) for p in pieces
    )


def tsquery(groups: list[list[str]]) -> str:
    """The ``tsquery`` of rows holding a lexeme of every group (none empty)."""
    return " & ".join("(" + " | ".join("'" + t + "'" for t in terms) + ")" for terms in groups)
