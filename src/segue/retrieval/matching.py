"""Literal, case-insensitive matching (R23) and the exact byte pre-filter of the scan. Pure.

:func:`matcher` is the one definition of a hit, shared by the scan and the index (which
only narrows the rows it is tried on). :func:`make_prefilter` lets the scan skip parsing a
line that provably holds no hit.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from segue.retrieval.project import Prefilter

__all__ = ["make_prefilter", "matcher"]

_RISKY = {  # non-ASCII code points that re.IGNORECASE matches to an ASCII letter
    "k": ("\u212a".encode(),),
    "s": ("\u017f".encode(),),
    "i": ("\u0130".encode(), "\u0131".encode()),
}


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


def make_prefilter(query: str) -> Prefilter | None:
    """A byte-level test that proves a line cannot hold a hit, or None when no exact test
    exists for this query.

    The key (:func:`_prefilter_key`) is part of every hit. Why its absence from the raw line
    is proof: projected text is made of JSON string values (kept verbatim in the raw line
    unless written with ``\\u`` escapes, and such lines are never skipped), re-rendered JSON
    of tool input/output (which can differ from the raw bytes only in whitespace,
    punctuation and number formatting — none of which a key contains), and segue's own
    bracketed words, which a key can match only if it lies inside one of them (such keys are
    not used). Letters that ``re.IGNORECASE`` folds to ASCII from outside ASCII (K, ſ, İ, ı)
    also keep a line from being skipped. Boundary rows are never skipped.
    """
    key = _prefilter_key(query.lower())
    if key is None:
        return None
    raw_key = key.encode("ascii")
    guards = [b"oundary", b"\\u"]
    for letter, seqs in _RISKY.items():
        if letter in key:
            guards.extend(seqs)

    def cannot_match(raw: bytes) -> bool:
        if raw_key in raw.lower():
            return False
        return not any(g in raw for g in guards)

    return cannot_match


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
