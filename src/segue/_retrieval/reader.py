"""Budgeted, resumable line readers over the transcript history (archive ++ chat).

Positions are *global*: archive bytes come first (``[0, A)``), chat bytes follow
(``[A, A + C)``). A cursor binds the archive's exact stamp, so ``A`` cannot change while a
position is in use.

Why not :func:`segue._history.scan.scan_backward`: that scanner always yields its first line,
however long, so one call could read far more than the 2 MiB a ``session_history`` call may
scan (R24). These readers stop *inside* a line when the budget runs out and report a resume
state, so a line of any size is crossed in several calls and every call stays in bounds.

Invariants:

* Bytes read per reader never exceed ``Budget.max_bytes - Budget.bytes`` at start; lines
  yielded never exceed the row budget.
* A line longer than ``max_line`` is yielded with ``raw=None``; ``marker`` is computed over
  all of its bytes (chunk edges overlap), so an oversized reset row still counts (R11, R24).
* Bytes after a file's last newline (a torn tail) are yielded once with ``complete=False``:
  they are never an item, but a marker in them still counts (fail closed).
* Lines never span files.
* The reset key is looked for once per chunk (:func:`~segue._context.floor.may_mention`) and
  again in each line only when the chunk may hold it; with a ``hot`` scan (a search's byte
  pre-filter, :mod:`~segue._retrieval.matching`), a line is ``quiet`` when the scan found
  none of its needles in the chunk it was cut from, and a chunk with no needle and no
  reset key at all comes as one quiet run. All of it only spares work: a line's bytes are
  a slice of its chunk, so what the chunk lacks, the line lacks.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from segue._context.floor import EDGE, ESCAPE, may_mention, mentions_reset_key
from segue._fsutil import open_regular_file

MAX_LINE = 1 << 20
_CHUNK = 1 << 16
_EDGE = EDGE


@dataclass
class Budget:
    max_bytes: int
    max_rows: int
    bytes: int = 0
    rows: int = 0

    @property
    def bytes_left(self) -> int:
        return max(0, self.max_bytes - self.bytes)

    @property
    def rows_left(self) -> int:
        return max(0, self.max_rows - self.rows)


class RawLine(NamedTuple):
    """One line as read (a named tuple: the scan makes one per line, so it is cheap)."""

    start: int  # global position of the first byte
    end: int  # global position past the newline (or past the last byte of a torn tail)
    raw: bytes | None  # without the newline; None when longer than max_line
    marker: bool  # the bytes mention the reset key
    complete: bool  # False for a torn tail
    #: the reader's ``hot`` scan found none of its needles in these bytes; with ``raw`` empty
    #: and no marker, the line may stand for a run of such lines, ``[start, end)`` (a search
    #: skips each of them alike, and the row budget counted each)
    quiet: bool = False


#: Start offsets in a buffer of the needles a search's pre-filter looks for, ascending, at
#: least one per line holding any; the flag says whether the buffer holds ``ESCAPE`` (see
#: :meth:`segue._retrieval.matching.ByteFilter.hot`)
Hot = Callable[[bytes, bool], list[int]]


@dataclass(frozen=True)
class Segment:
    path: Path
    start: int  # global position of the file's first byte
    end: int  # global position past the file's last byte (as of the snapshot)


def segments(archive: Path, archive_size: int, chat: Path, chat_size: int) -> list[Segment]:
    return [
        Segment(archive, 0, archive_size),
        Segment(chat, archive_size, archive_size + chat_size),
    ]


def _pread(path: Path, offset: int, size: int) -> bytes:
    f = open_regular_file(path)  # no link followed, no FIFO blocking (fsutil)
    if f is None:
        raise HistoryMoved(path)
    with f:
        data = os.pread(f.fileno(), size, offset)
    if len(data) != size:
        # Only possible if a file shrank while we hold the lock: an untracked writer. The
        # stamp check after the page reports it; stop here rather than return short data.
        raise HistoryMoved(path)
    return data


class HistoryMoved(Exception):
    """A file is shorter than its snapshot said: changed under the lock by an untracked
    writer. Pages answer ``history_changed``."""


class BackState(NamedTuple):
    """Resume point of a backward read: ``[pos, ...)`` is consumed; ``skip_end`` is set while
    crossing an oversized line that ends there (``skip_marker``: the reset key was seen in the
    part of it already read, R11)."""

    pos: int
    skip_end: int | None = None
    skip_marker: bool = False


class BackwardReader:
    """Lines newest first, from ``state`` down to position 0."""

    def __init__(
        self, segs: list[Segment], state: BackState, budget: Budget, hot: Hot | None = None
    ) -> None:
        self.segs = segs
        self.state = state
        self.budget = budget
        self.hot = hot
        self.exhausted = False  # stopped for the budget (not at the start of history)

    def __iter__(self) -> Iterator[RawLine]:
        pos, skip_end = self.state.pos, self.state.skip_end
        seen = self.state.skip_marker
        for seg in reversed(self.segs):
            if pos <= seg.start or seg.end <= seg.start:
                continue
            pos = min(pos, seg.end)
            yield from self._segment(seg, pos, skip_end, seen)
            if self.exhausted:
                return
            pos, skip_end, seen = seg.start, None, False
        self.state = BackState(0)

    def _segment(
        self, seg: Segment, pos: int, skip_end: int | None, seen: bool = False
    ) -> Iterator[RawLine]:
        budget = self.budget
        line_end = skip_end if skip_end is not None else pos
        oversized = skip_end is not None
        marker = seen and oversized
        edge = b""
        pending = b""
        own_nl: bool | None = True if oversized else None
        while True:
            if pos <= seg.start:
                if oversized:
                    budget.rows += 1
                    yield RawLine(
                        seg.start, line_end, None, marker or mentions_reset_key(edge), bool(own_nl)
                    )
                elif line_end > seg.start:
                    if budget.rows_left == 0:
                        self._suspend(BackState(line_end))
                        return
                    budget.rows += 1
                    yield _line(seg.start, line_end, pending, bool(own_nl))
                return
            n = min(_CHUNK, pos - seg.start, budget.bytes_left)
            if n == 0 or budget.rows_left == 0:
                if oversized:
                    # re-read the edge next time so a marker split at ``pos`` is still seen
                    self._suspend(BackState(min(pos + len(edge), line_end), line_end, marker))
                else:
                    self._suspend(BackState(line_end))
                return
            chunk = _pread(seg.path, pos - n - seg.start, n)
            budget.bytes += n
            pos -= n
            if oversized:
                nl = chunk.rfind(b"\n")
                if nl < 0:
                    both = chunk + edge
                    marker = marker or mentions_reset_key(both)
                    edge = both[:_EDGE]
                    continue
                tail = chunk[nl + 1 :] + edge
                marker = marker or mentions_reset_key(tail)
                budget.rows += 1
                yield RawLine(pos + nl + 1, line_end, None, marker, bool(own_nl))
                line_end = pos + nl + 1
                pending = chunk[: nl + 1]
                oversized, marker, edge, own_nl = False, False, b"", True
            else:
                pending = chunk + pending
                if own_nl is None:
                    own_nl = pending.endswith(b"\n")
            hi = len(pending)  # pending[:hi] is still unconsumed (no copies per line)
            escaped = pending.rfind(ESCAPE) >= 0
            mark = may_mention(pending, escaped)
            spots = self.hot(pending, escaped) if self.hot is not None else None
            j = len(spots) - 1 if spots is not None else -1
            if spots == [] and not mark and own_nl:
                first = pending.find(b"\n")  # the lines after it are whole: one quiet run
                n = pending.count(b"\n", first + 1, hi)
                if n and budget.rows + n <= budget.max_rows:
                    budget.rows += n
                    yield RawLine(pos + first + 1, line_end, b"", False, True, True)
                    line_end, hi = pos + first + 1, first + 1
            while True:
                idx = pending.rfind(b"\n", 0, max(hi - (1 if own_nl else 0), 0))
                if idx < 0:
                    break
                if budget.rows >= budget.max_rows:
                    self._suspend(BackState(line_end))
                    return
                budget.rows += 1
                start = pos + idx + 1
                quiet = False
                if spots is not None:
                    while j >= 0 and spots[j] >= hi:
                        j -= 1
                    quiet = j < 0 or spots[j] <= idx
                raw = pending[idx + 1 : hi - 1 if own_nl else hi]
                marker = mark and mentions_reset_key(raw)
                if len(raw) > MAX_LINE:
                    yield RawLine(start, line_end, None, marker, bool(own_nl))
                else:
                    yield RawLine(start, line_end, raw, marker, bool(own_nl), quiet)
                line_end = start
                hi = idx + 1
                own_nl = True
            pending = pending[:hi]
            if len(pending) > MAX_LINE + 1:
                oversized = True
                marker = mentions_reset_key(pending)
                edge = pending[:_EDGE]
                pending = b""

    def _suspend(self, state: BackState) -> None:
        self.state = state
        self.exhausted = True


def _line(
    start: int, end: int, data: bytes, own_nl: bool, *, mark: bool = True, quiet: bool = False
) -> RawLine:
    """A line cut from a chunk: ``mark`` False when the chunk cannot mention the reset key,
    ``quiet`` when the chunk's hot scan found nothing in this line."""
    raw = data[:-1] if own_nl else data
    marker = mark and mentions_reset_key(raw)
    if len(raw) > MAX_LINE:
        return RawLine(start, end, None, marker, own_nl)
    return RawLine(start, end, raw, marker, own_nl, quiet)


class FwdState(NamedTuple):
    """Resume point of a forward read: ``[..., pos)`` is consumed; ``skip_start`` is set while
    crossing an oversized line that starts there (``skip_marker``: a marker seen so far)."""

    pos: int
    skip_start: int | None = None
    skip_marker: bool = False


class ForwardReader:
    """Lines oldest first from ``state`` up to the end of the last segment."""

    def __init__(
        self, segs: list[Segment], state: FwdState, budget: Budget, hot: Hot | None = None
    ) -> None:
        self.segs = segs
        self.state = state
        self.budget = budget
        self.hot = hot
        self.exhausted = False

    def __iter__(self) -> Iterator[RawLine]:
        st = self.state
        for seg in self.segs:
            if st.pos >= seg.end or seg.end <= seg.start:
                continue
            st = FwdState(max(st.pos, seg.start), st.skip_start, st.skip_marker)
            yield from self._segment(seg, st)
            if self.exhausted:
                return
            st = FwdState(seg.end)
        self.state = FwdState(self.segs[-1].end if self.segs else 0)

    def _segment(self, seg: Segment, st: FwdState) -> Iterator[RawLine]:
        budget = self.budget
        pos = st.pos
        oversized = st.skip_start is not None
        line_start = st.skip_start if st.skip_start is not None else pos
        marker = st.skip_marker
        edge = b""
        pending = b""
        while True:
            if pos >= seg.end:
                if oversized or pending:
                    if budget.rows_left == 0:
                        self._suspend(FwdState(line_start))
                        return
                    budget.rows += 1
                    m = marker or mentions_reset_key(edge) or mentions_reset_key(pending)
                    raw = None if oversized else pending
                    yield RawLine(line_start, seg.end, raw, m, False)
                return
            n = min(_CHUNK, seg.end - pos, budget.bytes_left)
            if n == 0 or budget.rows_left == 0:
                if oversized:
                    self._suspend(FwdState(max(pos - len(edge), line_start), line_start, marker))
                else:
                    self._suspend(FwdState(line_start))
                return
            chunk = _pread(seg.path, pos - seg.start, n)
            budget.bytes += n
            pos += n
            if oversized:
                nl = chunk.find(b"\n")
                if nl < 0:
                    both = edge + chunk
                    marker = marker or mentions_reset_key(both)
                    edge = both[-_EDGE:]
                    continue
                marker = marker or mentions_reset_key(edge + chunk[:nl])
                budget.rows += 1
                end = pos - n + nl + 1
                yield RawLine(line_start, end, None, marker, True)
                line_start = end
                pending = chunk[nl + 1 :]
                oversized, marker, edge = False, False, b""
            else:
                pending += chunk
            search_from = 0
            escaped = pending.rfind(ESCAPE) >= 0
            mark = may_mention(pending, escaped)
            spots = self.hot(pending, escaped) if self.hot is not None else None
            j, n_spots = 0, len(spots) if spots is not None else 0
            if spots == [] and not mark:
                last = pending.rfind(b"\n")  # the lines up to it are whole: one quiet run
                n = pending.count(b"\n", 0, last + 1)
                if n and budget.rows + n <= budget.max_rows:
                    budget.rows += n
                    end = line_start + last + 1
                    yield RawLine(line_start, end, b"", False, True, True)
                    line_start, search_from = end, last + 1
            while True:
                idx = pending.find(b"\n", search_from)
                if idx < 0:
                    break
                if budget.rows_left == 0:
                    self._suspend(FwdState(line_start))
                    return
                budget.rows += 1
                end = line_start + idx - search_from + 1
                quiet = False
                if spots is not None:
                    while j < n_spots and spots[j] < search_from:
                        j += 1
                    quiet = j == n_spots or spots[j] >= idx
                data = pending[search_from : idx + 1]
                yield _line(line_start, end, data, True, mark=mark, quiet=quiet)
                line_start = end
                search_from = idx + 1
            pending = pending[search_from:]
            if len(pending) > MAX_LINE + 1:
                oversized = True
                marker = mentions_reset_key(pending)
                edge = pending[-_EDGE:]
                pending = b""

    def _suspend(self, state: FwdState) -> None:
        self.state = state
        self.exhausted = True


def read_span(path: Path, offset: int, size: int) -> bytes | None:
    """The bytes of one known line (for paging an item already located); None if the file
    no longer holds them (the caller's stamp check then reports the change)."""
    try:
        return _pread(path, offset, size)
    except (HistoryMoved, FileNotFoundError):
        return None
