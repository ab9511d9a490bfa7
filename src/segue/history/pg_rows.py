"""Pure preparation of the PostgreSQL store's rows: what each physical line is stored with.

A line is kept as its exact bytes; the other columns are derived from them the way the JSONL
readers derive them (``scan.parse_line``, the reset key test, ``views.windows.walk`` for the
window id and the displayed text that search indexes), so every answer computed from the
table equals the one computed from the files.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from segue.context.boundaries import (
    is_boundary,
    is_compaction_boundary,
    item_id,
    window_id_of_boundary,
)
from segue.context.floor import mentions_reset_key
from segue.history.scan import MAX_LINE, parse_line
from segue.messages import Row
from segue.views.project import display, is_hidden

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


@dataclass(frozen=True)
class Prepared:
    pos: int
    off: int
    raw: bytes
    seq: int | None
    item: str | None
    marker: bool
    window_id: str
    body: str | None


def _fold_char(c: str) -> str:
    up = c.upper()
    low = (up if len(up) == 1 else c).lower()
    return low[0] if low else c


def fold(text: str) -> str:
    """One code point per code point, case folded so that characters ``re.IGNORECASE``
    treats as equal (``K``/``k``/Kelvin sign, ``ſ``/``s``, ``İ``/``i``) fold alike."""
    return "".join(_fold_char(c) if not c.isascii() else c.lower() for c in text)


def searchable(text: str) -> str:
    """The search index's spelling of a text: folded (see :func:`fold`) and storable in
    PostgreSQL (no NUL, no lone surrogate). Index hits are only candidates, confirmed on the
    row itself, so this has to keep every true match and nothing more."""
    return _UNSTORABLE.sub("\ufffd", fold(text))


def body_of(row: Row) -> str | None:
    """The text ``segue history search`` matches, for rows that are items (views.walk)."""
    if is_hidden(row) or (is_boundary(row) and not is_compaction_boundary(row)):
        return None
    return searchable(display(row).text)


def prepare(
    raws: Iterable[bytes], *, pos: int, off: int, window_id: str
) -> tuple[list[Prepared], str]:
    """Column values for consecutive lines (without their newline) starting at ``pos`` and
    byte offset ``off``; also returns the window id after them."""
    out: list[Prepared] = []
    for raw in raws:
        row = parse_line(raw) if len(raw) <= MAX_LINE else None
        body: str | None = None
        item: str | None = None
        seq: int | None = None
        if row is not None:
            if is_boundary(row):
                window_id = window_id_of_boundary(row)
            body = body_of(row)
            item = item_id(row)
            seq = row.sequence
        out.append(Prepared(pos, off, raw, seq, item, mentions_reset_key(raw), window_id, body))
        pos += 1
        off += len(raw) + 1
    return out, window_id


_LIKE_SPECIAL = re.compile(r"([\\%_])")


def like_pattern(query: str) -> str:
    """A LIKE pattern matching ``query`` literally anywhere."""
    return "%" + _LIKE_SPECIAL.sub(r"\\\1", searchable(query)) + "%"
