"""Recognizing floor candidates in bytes (R11). Pure; the one recognizer every reader shares.

The privacy floor is a matter of bytes, not of one spelling. A line is a **floor candidate**
when its bytes hold the reset key ``contextBoundaryKind`` as a JSON string token however the
JSON writes it: every character literal or as a ``\\u00XX`` escape (hex in either case), so
``"contextBoundary\\u004bind"`` counts. Whitespace around the colon, key order and duplicate
keys do not matter, because only the key token itself is looked for. A line counts whether or
not it can be decoded (too deeply nested, invalid UTF-8, not an object, over 1 MiB).

Exact the other way too. A line that decodes **cleanly** — to one JSON object without a
duplicate key at any depth (:func:`decodes_cleanly`) — is judged by its decoded value alone:
only the row's own ``metadata.contextBoundaryKind`` decides, and the same key or value
anywhere else (a tool call's input or output, ``"other": "reset"``, nested objects, text)
never makes a floor. Byte-level recognition is for the lines that do not decode cleanly: an
undecodable line, one with a duplicate key (a decoder resolves it last-wins, so the decoded
value may hide a reset key), one too long to decode. :func:`settled_marker` turns the raw
"bytes hold the key" into the marker that counts for a line, and :func:`is_floor_line`
judges: a strict rollover boundary is never a floor (R11 names what validates), every other
reset row is, and so is a line that does not decode cleanly whose bytes hold the key.
:func:`is_floor_bytes` is that whole rule over one line's bytes, for writers that must keep
a floor a floor when they re-encode a line.

Streaming: a line may arrive in pieces (a large line read in chunks, forward or backward).
:class:`KeyWatch` keeps :data:`EDGE` bytes of overlap, the longest spelling of the token less
one, so a token that straddles any read edge is still seen.
"""

from __future__ import annotations

import json
import re
from typing import Any

from segue._context.boundaries import is_reset_row, is_strict_rollover
from segue._errors import RowDecodeError
from segue._messages import Row, decode_row

RESET_KEY = "contextBoundaryKind"
#: the plain spelling, found with a fast substring test
LITERAL = b'"' + RESET_KEY.encode() + b'"'
#: the longest spelling of the token: two quotes and six bytes (``\\u00XX``) per character
MAX_TOKEN = 2 + 6 * len(RESET_KEY)
#: overlap kept between pieces of a streamed line
EDGE = MAX_TOKEN - 1
#: how every escaped spelling of an ASCII character starts
ESCAPE = b"\\u00"


def _char_pattern(ch: str) -> bytes:
    """One character of the key: itself, or ``\\u00XX`` with hex digits in either case."""
    digits = b"".join(
        b"[" + d.lower().encode() + d.upper().encode() + b"]" if d.isalpha() else d.encode()
        for d in f"{ord(ch):02x}"
    )
    return b"(?:" + re.escape(ch.encode()) + rb"|\\u00" + digits + b")"


_TOKEN = re.compile(b'"' + b"".join(_char_pattern(c) for c in RESET_KEY) + b'"')


def mentions_reset_key(data: bytes) -> bool:
    """Whether ``data`` holds the reset key token in any JSON spelling."""
    if LITERAL in data:
        return True
    # any other spelling escapes at least one character
    return ESCAPE in data and _TOKEN.search(data) is not None


def may_mention(data: bytes, escaped: bool) -> bool:
    """False when no slice of ``data`` can mention the reset key (so a reader that cut lines
    from ``data`` need not look in each); ``escaped``: whether :data:`ESCAPE` occurs in
    ``data`` (``data.rfind(ESCAPE) >= 0``). Every spelling is the literal token or holds
    that escape."""
    return escaped or data.rfind(LITERAL) >= 0  # rfind: much faster than ``in`` on this token


#: lines longer than this are not decoded by readers (R24); their bytes alone decide
MAX_DECODED = 1 << 20


class _Duplicate(Exception):
    pass


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise _Duplicate
    return obj


def decodes_cleanly(raw: bytes) -> bool:
    """Whether ``raw`` is one JSON object with no duplicate key at any depth (keys compared
    after unescaping, so ``"a"`` and ``"\\u0061"`` are the same key). Anything this decoder
    cannot read (invalid UTF-8, nesting past the interpreter's limit) is not clean."""
    try:
        value = json.loads(raw, object_pairs_hook=_unique)
    except (_Duplicate, ValueError, RecursionError):
        return False
    return isinstance(value, dict)


def settled_marker(raw: bytes | None, row: Row | None, marker: bool) -> bool:
    """The marker that counts for a line, for :func:`is_floor_line`: ``marker`` (the line's
    bytes hold the key, :func:`mentions_reset_key`) unless the line was decoded (``row``)
    from bytes ``raw`` that decode cleanly, in which case the decoded row alone decides."""
    if not marker or row is None or raw is None:
        return marker
    return not decodes_cleanly(raw)


def is_floor_line(row: Row | None, marker: bool) -> bool:
    """Whether a line is a floor candidate: ``row`` is the decoded row (None when the line
    could not be decoded or was too large to), ``marker`` the settled marker
    (:func:`settled_marker`): its bytes hold the key and it does not decode cleanly."""
    if row is None:
        return marker
    if is_strict_rollover(row):
        return False
    return marker or is_reset_row(row)


def decode_line(raw: bytes) -> Row | None:
    """The row a reader decodes from one line (without its newline), or None."""
    if len(raw) > MAX_DECODED:
        return None
    try:
        return decode_row(raw)
    except RowDecodeError:
        return None


def is_floor_bytes(raw: bytes) -> bool:
    """R11's whole rule over one line's bytes (without its newline), as every reader applies
    it: whether that line is a floor candidate."""
    row = decode_line(raw)
    return is_floor_line(row, settled_marker(raw, row, mentions_reset_key(raw)))


class KeyWatch:
    """Feeds the pieces of one line, in file order (``forward``) or reverse order, and tells
    whether the reset key token occurred anywhere in the bytes fed so far."""

    __slots__ = ("edge", "forward", "found")

    def __init__(self, *, forward: bool) -> None:
        self.forward = forward
        self.found = False
        self.edge = b""

    def feed(self, piece: bytes) -> bool:
        if not piece:
            return self.found
        both = self.edge + piece if self.forward else piece + self.edge
        if not self.found and mentions_reset_key(both):
            self.found = True
        self.edge = both[-EDGE:] if self.forward else both[:EDGE]
        return self.found
