"""Pure helpers shared by every store: stamping a batch, import parsing, item matching."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from segue._context.boundaries import is_boundary, is_manual_reset, item_id
from segue._context.floor import is_floor_bytes
from segue._errors import RowDecodeError
from segue._messages import Row, decode_row, encode_row, with_metadata


def stamp(rows: Sequence[Row], first_sequence: int, workspace_id: str) -> list[Row]:
    """Rows as the store writes them: ``historySequence`` from ``first_sequence`` on (any
    value the caller set is replaced: sequences belong to the store) and the workspace id."""
    return [
        msgspec.structs.replace(
            with_metadata(row, historySequence=first_sequence + i), workspaceId=workspace_id
        )
        for i, row in enumerate(rows)
    ]


def encode_batch(rows: Sequence[Row]) -> tuple[bytes, int | None]:
    """The batch bytes (one line per row) and the offset within them of the newest durable
    boundary, if any."""
    parts: list[bytes] = []
    pos = 0
    cut: int | None = None
    for row in rows:
        line = encode_row(row)
        if b"\n" in line:  # compact JSON escapes newlines; a raw one would split the row
            raise RowDecodeError(f"row {row.id!r} encodes with a raw newline")
        if is_boundary(row):
            cut = pos
        parts.append(line)
        parts.append(b"\n")
        pos += len(line) + 1
    return b"".join(parts), cut


def parse_import(data: bytes) -> list[Row]:
    """Rows of a Xum session file. Every non-empty line must be a row, or the whole file is
    refused with an error naming the first bad line. Rows keep everything but
    ``historySequence`` and ``workspaceId`` (the store assigns both).

    The store writes each row re-encoded, so a floor (R11) must survive that. A line that is a
    floor candidate in the file (:func:`segue._context.floor.is_floor_bytes`, the readers'
    rule) whose decoded row is not one (its reset key lost to a duplicate key, which decodes
    last-wins, or standing where only bytes-level recognition sees it) is written as an
    unambiguous manual reset: its row with ``metadata.contextBoundaryKind: "reset"``. Where
    even that would validate as a rollover boundary, the file is refused, naming the line."""
    rows: list[Row] = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        line = raw.rstrip(b"\r")
        if not line.strip():
            continue
        try:
            row = decode_row(line)
        except RowDecodeError as exc:
            raise RowDecodeError(f"line {number} is not a row: {exc.message}") from None
        extra = {k: v for k, v in row.extra.items() if k != "workspaceId"}
        row = msgspec.structs.replace(
            with_metadata(row, historySequence=None), workspaceId=None, extra=extra
        )
        if is_floor_bytes(line) and not is_manual_reset(row):
            row = with_metadata(row, contextBoundaryKind="reset")
            if not is_manual_reset(row):
                raise RowDecodeError(
                    f"line {number} is a privacy floor only in its bytes (its reset key is "
                    "lost when the line is decoded, e.g. under a duplicate key), and as a "
                    "decoded row it would be a rollover boundary: write it without the "
                    "duplicate key"
                )
        rows.append(row)
    return rows


def matches_item(row: Row, wanted: str) -> bool:
    return item_id(row) == wanted
