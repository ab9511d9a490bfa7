"""Where to cut a long string so that it can be counted piece by piece (SPEC.md §6).

Pure string arithmetic; no tokenizer here.

Invariants:

* Every chunk is at most :data:`CHUNK_CODE_POINTS` code points, and the chunks concatenate
  back to the input.
* A cut never separates a UTF-16 surrogate pair (a str read with ``surrogatepass`` may hold
  one; tiktoken rejoins pairs before encoding, so splitting one would count two U+FFFD).
* A *clean* cut falls where both bundled encodings' split patterns provably start a new piece
  and tokenize the left part exactly as they tokenize that prefix inside the whole text:
  before a space (U+0020) that follows a non-whitespace character, or after a ``\\n`` that is
  followed by a character that is neither whitespace nor ``/`` (o200k's punctuation piece may
  swallow trailing ``\\r\\n/``). The token count of a string cut only at clean cuts is the
  sum of its chunks' counts, exactly.
* A *forced* cut (no clean cut in the second half of the window: CJK without spaces,
  minified or base64 data) lands at the window's end, moved back a little so it does not
  separate a base character from its combining marks, a zero-width joiner, a variation
  selector, an emoji modifier or a regional-indicator pair. Its error is bounded by
  the caller's slack (see :mod:`segue._tokens.counting`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass

CHUNK_CODE_POINTS = 4096

#: How far a forced cut may move back to keep a grapheme together.
_MAX_GRAPHEME_BACKOFF = 32

#: Unicode White_Space, which is what ``\s`` means in tiktoken's patterns (Python's
#: ``str.isspace`` differs on U+001C..U+001F, so it is not used).
WHITESPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
    "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


_WS_CLASS = "".join(f"\\u{ord(c):04x}" for c in sorted(WHITESPACE))
#: Zero-width matches at clean cut positions: before a space that follows a non-space, or
#: after a newline followed by neither whitespace nor ``/``.
_CLEAN_CUT = re.compile(f"(?<=[^{_WS_CLASS}])(?= )|(?<=\\n)(?=[^{_WS_CLASS}/])")


@dataclass(frozen=True)
class Chunk:
    start: int
    end: int
    #: True when the cut at ``end`` is forced (see module docstring); False for a clean cut
    #: and for the last chunk.
    forced: bool


def chunks(text: str, size: int = CHUNK_CODE_POINTS) -> Iterator[Chunk]:
    """The chunks of ``text`` in order; a single chunk when it is short enough. A clean cut
    is looked for only in the second half of each window, so chunks stay large."""
    n = len(text)
    start = 0
    min_clean = size // 2
    while n - start > size:
        limit = start + size
        cut = clean_cut(text, start + min_clean, limit)
        if cut is not None:
            yield Chunk(start, cut, forced=False)
            start = cut
            continue
        cut = forced_cut(text, start, limit)
        yield Chunk(start, cut, forced=True)
        start = cut
    yield Chunk(start, n, forced=False)


def clean_cut(text: str, lo: int, hi: int) -> int | None:
    """The last clean cut position ``p`` with ``lo <= p <= hi``, or None.

    Searched in growing windows from ``hi`` backwards, so ordinary text (a space within the
    last few dozen characters) costs one short regex scan, never a Python loop over a run
    of indentation.
    """
    span = 64
    while True:
        begin = max(lo, hi - span)
        last = None
        for match in _CLEAN_CUT.finditer(text, begin, hi + 1):
            if match.start() <= hi:
                last = match.start()
        if last is not None or begin == lo:
            return last
        span *= 8


def _is_high_surrogate(ch: str) -> bool:
    return "\ud800" <= ch <= "\udbff"


def _is_low_surrogate(ch: str) -> bool:
    return "\udc00" <= ch <= "\udfff"


def _joins_previous(ch: str) -> bool:
    """Would a grapheme continue with ``ch``? (Combining marks, ZWJ, variation selectors,
    emoji modifiers and tag characters.)"""
    code = ord(ch)
    if code == 0x200D or 0xFE00 <= code <= 0xFE0F or 0xE0020 <= code <= 0xE007F:
        return True
    if 0x1F3FB <= code <= 0x1F3FF:  # emoji skin-tone modifiers
        return True
    return unicodedata.category(ch).startswith("M")


def _is_regional_indicator(ch: str) -> bool:
    return 0x1F1E6 <= ord(ch) <= 0x1F1FF


def forced_cut(text: str, start: int, limit: int) -> int:
    """A cut at ``limit`` or a little before it that keeps surrogate pairs and, where it
    can, graphemes together. Always ``start < result <= limit``."""
    floor = max(start + 1, limit - _MAX_GRAPHEME_BACKOFF)
    p = limit
    while p > floor and (
        _joins_previous(text[p]) or text[p - 1] == "\u200d" or _splits_flag(text, p)
    ):
        p -= 1
    if p == floor and floor != limit:
        p = limit  # a pathological run of joiners: give up on the grapheme, keep the size
    if p - 1 > start and _is_high_surrogate(text[p - 1]) and _is_low_surrogate(text[p]):
        p -= 1
    return p


def _splits_flag(text: str, p: int) -> bool:
    """True if ``p`` falls inside a pair of regional indicators (a flag)."""
    if not (_is_regional_indicator(text[p]) and _is_regional_indicator(text[p - 1])):
        return False
    run = 0
    i = p - 1
    while i >= 0 and _is_regional_indicator(text[i]):
        run += 1
        i -= 1
    return run % 2 == 1
