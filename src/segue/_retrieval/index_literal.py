"""What the index's literal tables hold, and what a literal query asks of them (R23, SPEC.md
§7 "word candidates verified against the text"). Pure.

**Tokens.** A text's tokens are its maximal runs of ASCII letters and digits and non-ASCII
characters, with ASCII letters lower-cased: exactly what FTS5's ``ascii`` tokenizer makes of
it (:func:`tokens` does the same in a few C-level passes, for ``lex``). Every other ASCII
character separates tokens.

**Why a query's pieces must be in a hit's tokens.** A literal hit is the query as a
case-insensitive substring (``re.IGNORECASE``) of the text. Split the query the same way into
pieces. An ASCII character of the query matches only itself or its ASCII case partner (the
four letters that also match K, ſ, İ or ı make their rows "risky": always candidates, see
index_ddl.py), so in a non-risky hit every ASCII piece stands, lower-cased, inside one token
of the text, and every separator of the query is that same character in the text, so it ends
the token there. A non-ASCII query character matches only a token character (a non-ASCII one,
or for those four an ASCII letter), so next to it the token goes on. So a piece that the query
closes with separators on both sides *is* a token; one closed on its left only starts a token
(a prefix), on its right only ends one (a suffix), and one open on both sides lies anywhere
inside a token. Every hit's row holds a token of each kind asked; the rows that do are
candidates, and each candidate is verified on its text re-read from the transcript, so the
answer is the scan's, exactly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

__all__ = ["Need", "Piece", "pieces", "tokens"]

#: ASCII letters lower-cased, other ASCII characters (the separators) a space, bytes of
#: non-ASCII characters (>= 0x80) kept: ``bytes.split()`` then yields the tokens
_FOLD = bytes(
    (c + 32 if 65 <= c <= 90 else c if (48 <= c <= 57 or 97 <= c <= 122 or c >= 128) else 32)
    for c in range(256)
)
_QUERY_TOKEN = re.compile(r"[0-9A-Za-z\u0080-\U0010ffff]+")
_ASCII_RUN = re.compile(r"[0-9A-Za-z]+")


def tokens(text: str) -> list[bytes]:
    """The text's tokens, as UTF-8 (a token never splits a character: only ASCII bytes
    separate them)."""
    return text.encode("utf-8", "surrogatepass").translate(_FOLD).split()


class Need(Enum):
    """Which tokens a piece picks out."""

    EXACT = "exact"  # the token is the piece
    PREFIX = "prefix"  # the token starts with it
    SUFFIX = "suffix"  # the token ends with it
    INSIDE = "inside"  # the token holds it anywhere


@dataclass(frozen=True)
class Piece:
    text: str  # lower-case ASCII letters and digits
    need: Need


def _need(left_closed: bool, right_closed: bool) -> Need:
    if left_closed:
        return Need.EXACT if right_closed else Need.PREFIX
    return Need.SUFFIX if right_closed else Need.INSIDE


def pieces(query: str) -> list[Piece]:
    """What every non-risky hit's row must hold: one token per piece (module docstring). An
    empty list: the query asks nothing of the tokens (it has no ASCII letter or digit)."""
    out: list[Piece] = []
    for match in _QUERY_TOKEN.finditer(query):
        left, right = match.start() > 0, match.end() < len(query)
        token = match.group()
        if token.isascii():
            out.append(Piece(token.lower(), _need(left, right)))
            continue
        for run in _ASCII_RUN.finditer(token):  # next to a non-ASCII character it goes on
            closed_left = left and run.start() == 0
            closed_right = right and run.end() == len(token)
            out.append(Piece(run.group().lower(), _need(closed_left, closed_right)))
    return out
