"""Literal, case-insensitive matching (R23) and the exact byte pre-filter of the scan. Pure.

:func:`matcher` is the one definition of a hit, shared by the scan and the index (which
only narrows the rows it is tried on). :func:`make_prefilter` lets the scan skip parsing a
line that provably holds no hit.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from segue._context.floor import ESCAPE

__all__ = ["ByteFilter", "make_prefilter", "matcher"]

_RISKY = {  # non-ASCII code points that re.IGNORECASE matches to an ASCII letter
    "k": ("\u212a",),
    "s": ("\u017f",),
    "i": ("\u0130", "\u0131"),
}
#: the byte pre-filter never skips a compaction boundary (reset rows hold the reset key, and
#: a line holding that is never skipped); an escaped spelling of the key holds ``ESCAPE``
_BOUNDARY_KEY = b"compactionBoundary"


_PREFILTER_QUERY = re.compile(r"[a-z_-]+")
_LETTER_RUN = re.compile(r"[a-z]{3,}")
#: words segue itself adds to projected text (``[tool NAME]``, ``[media omitted]``, ``[error]``)
#: and words a re-rendered JSON number can spell (``Infinity``, ``NaN``): a key taken from
#: inside one of them proves nothing about the raw bytes
_SYNTHETIC_WORDS = ("tool", "media", "omitted", "error", "infinity", "nan")


def _prefilter_key(needle: str) -> str | None:
    """The lower-cased text every hit's raw line must contain, or None when there is none.

    A query of ASCII letters, ``_`` and ``-`` is its own key. Any other query is keyed by its
    longest run of ASCII letters (at least three): whatever punctuation, spacing or number
    formatting the projection re-renders around it, those letters stand contiguous in the
    raw line too.
    """
    if _PREFILTER_QUERY.fullmatch(needle):
        return None if any(needle in w for w in _SYNTHETIC_WORDS) else needle
    runs = [r for r in _LETTER_RUN.findall(needle) if not any(r in w for w in _SYNTHETIC_WORDS)]
    return max(runs, key=len) if runs else None


class ByteFilter:
    """The exact byte pre-filter of one query (see :func:`make_prefilter`): called with a raw
    line, True when that line cannot hold a hit and is no boundary. :meth:`hot` answers the
    same for every line of a buffer at once."""

    __slots__ = ("guards", "key")

    def __init__(self, key: bytes, guards: tuple[bytes, ...]) -> None:
        self.key = key  # lower case
        self.guards = guards  # matched as they are, besides ``ESCAPE``

    def __call__(self, raw: bytes) -> bool:
        if self.key in raw.lower() or ESCAPE in raw:
            return False
        return not any(g in raw for g in self.guards)

    def hot(self, buf: bytes, escaped: bool) -> list[int]:
        """Ascending offsets in ``buf`` where a needle (the key, ASCII case aside, a guard,
        or ``ESCAPE`` when ``escaped`` says ``buf`` holds it) starts: the last of each
        needle in every line holding it. A line of ``buf`` without an offset is one the
        filter would skip (needles hold no newline, so none spans two lines)."""
        spots: list[int] = []
        low = buf.lower()
        hays = [(self.key, low), *((g, buf) for g in self.guards)]
        if escaped:
            hays.append((ESCAPE, buf))
        for needle, hay in hays:
            # backwards: CPython's rfind skips ahead much further than find on these needles
            at = hay.rfind(needle)
            while at >= 0:
                spots.append(at)
                nl = hay.rfind(b"\n", 0, at)
                if nl < 0:
                    break
                at = hay.rfind(needle, 0, nl)
        spots.sort()
        return spots


def make_prefilter(query: str) -> ByteFilter | None:
    """A byte-level test that proves a line cannot hold a hit, or None when no exact test
    exists for this query.

    The key (:func:`_prefilter_key`) is part of every hit. Why its absence from the raw line
    is proof: projected text is made of JSON string values (kept verbatim in the raw line
    unless written with ``\\u`` escapes, and such lines are never skipped), re-rendered JSON
    of tool input/output (which can differ from the raw bytes only in whitespace,
    punctuation and number formatting — none of which a key contains), and segue's own
    bracketed words, which a key can match only if it lies inside one of them (such keys are
    not used). An escape spells an ASCII character only as ``\\u00XX`` (``ESCAPE``), so a line
    holding that is never skipped. Letters that ``re.IGNORECASE`` folds to ASCII from
    outside ASCII (K, ſ, İ, ı), raw or escaped, also keep a line from being skipped, when
    the key holds the letter they fold to. Boundary rows are never skipped.
    """
    key = _prefilter_key(query.lower())
    if key is None:
        return None
    guards = [_BOUNDARY_KEY]
    for letter, chars in _RISKY.items():
        if letter in key:
            for ch in chars:
                # as UTF-8, and escaped (``\\u212a``: its first five bytes, either hex case)
                guards.extend({ch.encode(), f"\\u{ord(ch):04x}"[:5].encode()})
    return ByteFilter(key.encode("ascii"), tuple(dict.fromkeys(guards)))


def matcher(query: str) -> Callable[[str], tuple[int, int] | None]:
    """Literal, case-insensitive: ``re.IGNORECASE`` semantics, with a fast exact path for
    ASCII text (where that equals comparing lower-cased strings)."""
    pattern = re.compile(re.escape(query), re.IGNORECASE)
    lowered = query.lower() if query.isascii() else None

    def find(text: str) -> tuple[int, int] | None:
        if lowered is not None and text.isascii():
            at = text.lower().find(lowered)
            return None if at < 0 else (at, at + len(lowered))
        m = pattern.search(text)
        return None if m is None else (m.start(), m.end())

    return find
