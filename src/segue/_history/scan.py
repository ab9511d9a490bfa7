"""Bounded streaming over one transcript file, forward or backward. No lock is taken here.

Invariants:

* Only newline-terminated lines are data. Bytes after the last newline of the scanned range
  (a torn tail left by a crash, or a batch still being written) are never yielded.
* Memory is bounded by ``max_line`` plus one read chunk, whatever the file or line size: a
  line longer than ``max_line`` is yielded with ``raw=None``/``row=None`` and its bytes are
  dropped as they stream past, but ``reset_marker`` is still computed over every byte of it
  (R11, R24: an oversized line may be a reset row and must still count as a floor). For a
  line that decodes cleanly the decoded row alone decides (R11), so its marker is False.
* ``max_bytes``/``max_rows`` stop the scan *before* a line that would exceed them, except that
  the first line is always yielded so a paging caller always makes progress.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Literal

from segue._context.floor import EDGE, mentions_reset_key, settled_marker
from segue._errors import RowDecodeError
from segue._fsutil import open_regular_file
from segue._messages import Row, decode_row

Source = Literal["archive", "chat"]
MAX_LINE = 1 << 20
_CHUNK = 1 << 16


@dataclass(frozen=True)
class StoredLine:
    source: Source
    offset: int  # byte offset of the line's first byte in its file
    length: int  # bytes including the trailing newline
    raw: bytes | None  # the line without newline; None when longer than max_line
    row: Row | None  # parsed row; None when unparseable or oversized
    #: the bytes hold the reset key in some spelling and the line does not decode cleanly
    #: (context.floor.settled_marker): with ``row``, what context.floor.is_floor_line judges
    reset_marker: bool

    @property
    def end(self) -> int:
        return self.offset + self.length


def parse_line(raw: bytes) -> Row | None:
    try:
        return decode_row(raw)
    except RowDecodeError:
        return None


class _Line:
    """The line being assembled, fed segments in file order (forward) or reverse (backward)."""

    def __init__(self, max_line: int, forward: bool) -> None:
        self.max_line = max_line
        self.forward = forward
        self.pieces: list[bytes] = []
        self.size = 0
        self.oversized = False
        self.marker = False
        self.edge = b""  # bytes next to the unread side, to catch a marker split by a chunk

    def add(self, seg: bytes) -> None:
        if not seg:
            return
        self.size += len(seg)
        keep = EDGE
        if not self.oversized:
            self.pieces.append(seg)
            if self.size <= self.max_line:
                return
            joined = self._joined()
            self.pieces = []
            self.oversized = True
            self.marker = mentions_reset_key(joined)
            self.edge = joined[-keep:] if self.forward else joined[:keep]
            return
        both = self.edge + seg if self.forward else seg + self.edge
        self.marker = self.marker or mentions_reset_key(both)
        self.edge = both[-keep:] if self.forward else both[:keep]

    def _joined(self) -> bytes:
        return b"".join(self.pieces if self.forward else reversed(self.pieces))

    def finish(self, source: Source, offset: int) -> StoredLine:
        if self.oversized:
            return StoredLine(source, offset, self.size + 1, None, None, self.marker)
        raw = self._joined()
        row = parse_line(raw)
        marker = settled_marker(raw, row, mentions_reset_key(raw))
        return StoredLine(source, offset, self.size + 1, raw, row, marker)


class _Budget:
    def __init__(self, max_bytes: int | None, max_rows: int | None) -> None:
        self.max_bytes = max_bytes
        self.max_rows = max_rows
        self.bytes = 0
        self.rows = 0

    def admit(self, line: StoredLine) -> bool:
        first = self.rows == 0
        if not first and self.max_rows is not None and self.rows + 1 > self.max_rows:
            return False
        if not first and self.max_bytes is not None and self.bytes + line.length > self.max_bytes:
            return False
        self.rows += 1
        self.bytes += line.length
        return True


def _open(path: Path) -> BinaryIO | None:
    # Never follows a final symlink, never blocks on a FIFO; a non-regular file is a
    # FileError naming the path (fsutil).
    return open_regular_file(path)


def _bounds(f: BinaryIO, start: int, end: int | None) -> tuple[int, int]:
    size = os.fstat(f.fileno()).st_size
    stop = size if end is None else min(end, size)
    return max(0, start), stop


def scan_forward(
    path: Path,
    source: Source,
    start: int = 0,
    *,
    end: int | None = None,
    max_bytes: int | None = None,
    max_rows: int | None = None,
    max_line: int = MAX_LINE,
) -> Generator[StoredLine, None, None]:
    """Complete lines of ``path`` in ``[start, end)``, oldest first. ``start`` must be a line
    start (0 or the end of a line); ``end`` defaults to the size when the scan begins."""
    f = _open(path)
    if f is None:
        return
    try:
        yield from scan_forward_file(
            f, source, start, end=end, max_bytes=max_bytes, max_rows=max_rows, max_line=max_line
        )
    finally:
        f.close()


def scan_forward_file(
    f: BinaryIO,
    source: Source,
    start: int = 0,
    *,
    end: int | None = None,
    max_bytes: int | None = None,
    max_rows: int | None = None,
    max_line: int = MAX_LINE,
) -> Generator[StoredLine, None, None]:
    """:func:`scan_forward` over an open file (a snapshot that survives a rename)."""
    lo, hi = _bounds(f, start, end)
    budget = _Budget(max_bytes, max_rows)
    f.seek(lo)
    pos, line_start = lo, lo
    line = _Line(max_line, forward=True)
    while pos < hi:
        buf = f.read(min(_CHUNK, hi - pos))
        if not buf:
            return
        i = 0
        while True:
            j = buf.find(b"\n", i)
            line.add(buf[i : j if j >= 0 else len(buf)])
            if j < 0:
                break
            done = line.finish(source, line_start)
            if not budget.admit(done):
                return
            yield done
            line_start = pos + j + 1
            line = _Line(max_line, forward=True)
            i = j + 1
        pos += len(buf)


def scan_backward(
    path: Path,
    source: Source,
    end: int | None = None,
    *,
    start: int = 0,
    max_bytes: int | None = None,
    max_rows: int | None = None,
    max_line: int = MAX_LINE,
) -> Generator[StoredLine, None, None]:
    """Complete lines of ``path`` in ``[start, end)``, newest first. Bytes after the last
    newline before ``end`` (a torn tail) are skipped; ``start`` must be a line start."""
    f = _open(path)
    if f is None:
        return
    try:
        yield from scan_backward_file(
            f, source, end, start=start, max_bytes=max_bytes, max_rows=max_rows, max_line=max_line
        )
    finally:
        f.close()


def scan_backward_file(
    f: BinaryIO,
    source: Source,
    end: int | None = None,
    *,
    start: int = 0,
    max_bytes: int | None = None,
    max_rows: int | None = None,
    max_line: int = MAX_LINE,
) -> Generator[StoredLine, None, None]:
    """:func:`scan_backward` over an open file."""
    lo, hi = _bounds(f, start, end)
    budget = _Budget(max_bytes, max_rows)
    pos = hi
    line_end: int | None = None  # end (past the newline) of the line being assembled
    line = _Line(max_line, forward=False)
    while pos > lo:
        n = min(_CHUNK, pos - lo)
        pos -= n
        f.seek(pos)
        buf = f.read(n)
        if len(buf) != n:
            return  # the file shrank under us: a reader without the lock just stops
        i = len(buf)
        while True:
            j = buf.rfind(b"\n", 0, i)
            if line_end is not None:
                line.add(buf[j + 1 : i])
            if j < 0:
                break
            if line_end is not None:
                done = line.finish(source, pos + j + 1)
                if not budget.admit(done):
                    return
                yield done
                line = _Line(max_line, forward=False)
            # the newline at pos+j terminates the next (older) line
            line_end = pos + j + 1
            i = j
    if line_end is not None and line_end > lo:
        done = line.finish(source, lo)
        if budget.admit(done):
            yield done
