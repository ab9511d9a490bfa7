"""A rebuild's lines as batches of records, made in this process or, where it pays, two
in three of them by a forked worker (:mod:`segue._retrieval.index_build_worker`). I/O.

The worker reads every line and follows the window state (:meth:`Walker.step`: which
window each row is in depends on every boundary before it) through the batches it leaves to
this process; for each of them it sends, in its place, where the batch starts and the window
state there (:class:`_Turn`), and at its end the state after the last line (:class:`_End`).
This process reads only its own batches, from there, and inserts every batch, in order, so
the index is the same file, row for row and token for token, whichever made a batch
(tests/index/test_rebuild_worker.py). Analysing a row (classification, projection, the words
and literal analyses) is about two thirds of a rebuild's work and inserting it into SQLite
about a third: this process, which inserts everything, makes one batch in :data:`_SHARE`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from segue._retrieval import index_build_worker
from segue._retrieval.index_build import (
    _BATCH,
    _UNBOUNDED,
    Batch,
    Record,
    Walker,
    _Known,
)
from segue._retrieval.reader import (
    Budget,
    ForwardReader,
    FwdState,
    HistoryMoved,
    RawLine,
    Segment,
)

__all__ = ["Scan", "analyse", "batches"]


def batches(
    segs: list[Segment],
    reader: Iterable[RawLine],
    walker: Walker,
    scan: Scan,
    seen: _Known,
    *,
    lock_fd: int,
) -> Iterator[Batch]:
    """Every batch of the transcript's lines (``segs``, read by ``reader``), in order:
    ``walker`` ends in the last line's window, ``scan`` says where the lines ended and
    ``seen`` learns them. ``lock_fd``: the side file's lock, which a worker closes."""
    chat_start = segs[1].start
    if not index_build_worker.wanted(segs[-1].end):
        yield from analyse(reader, walker, chat_start, scan, seen)
        return
    with index_build_worker.Worker(
        lambda: _worker_batches(segs, chat_start), close=lock_fd
    ) as worker:
        yield from _merged(worker.batches(), segs, walker, scan, seen)


@dataclass
class Scan:
    """Where :func:`analyse` ended: the start of a chat line it left out for lacking its
    newline (None when there is none)."""

    torn: int | None = None


def analyse(
    lines: Iterable[RawLine],
    walker: Walker,
    chat_start: int,
    scan: Scan,
    seen: _Known,
    *,
    size: int = _BATCH,
) -> Iterator[Batch]:
    """The lines as batches of ``size`` lines, oldest first; ``seen`` learns their lines
    (while it has room) and ``scan`` where they ended."""
    records: list[Record] = []
    number = 0
    for line in lines:
        if not line.complete and line.start >= chat_start:
            scan.torn = line.start
            break
        records.append(walker.record(line))
        if len(records) >= size:
            yield _learn(Batch.of(records, line.end, number), seen)
            records, number = [], number + 1
    if records:
        yield _learn(Batch.of(records, records[-1].end, number), seen)


@dataclass(frozen=True, slots=True)
class _Turn:
    """In the worker's stream, in the place of batch ``number``, which is this process's:
    where its first line starts and the window state before it (:class:`Walker`)."""

    number: int
    pos: int
    win: int
    wid: str
    hwin: str


@dataclass(frozen=True, slots=True)
class _End:
    """The worker's last word: the window state after the last line, and the start of a
    chat line left out for lacking its newline (:class:`Scan`)."""

    win: int
    wid: str
    hwin: str
    torn: int | None


def _merged(
    stream: Iterator[Batch | _Turn | _End],
    segs: list[Segment],
    walker: Walker,
    scan: Scan,
    seen: _Known,
) -> Iterator[Batch]:
    """The worker's batches with this process's in their places, in order; ``walker`` and
    ``scan`` end as the worker's did."""
    lost = index_build_worker.WorkerLost("the rebuild's worker fell out of step")
    for number, item in enumerate(stream):
        if isinstance(item, _End):
            walker.win, walker.wid, walker.hwin = item.win, item.wid, item.hwin
            scan.torn = item.torn
            if next(stream, None) is not None:  # also reads its end, or the error it met
                raise lost
            return
        batch = _own(segs, item) if isinstance(item, _Turn) else item
        if batch.number != number:
            raise lost
        yield _learn(batch, seen)
    raise lost


def _own(segs: list[Segment], turn: _Turn) -> Batch:
    """This process's batch the worker's :class:`_Turn` stands for: the
    :data:`~segue._retrieval.index_build_worker.BATCH` lines from its start (fewer at the end
    or at a torn chat tail)."""
    walker = Walker(turn.win, turn.wid, turn.hwin)
    reader = ForwardReader(segs, FwdState(turn.pos), Budget(_UNBOUNDED, _UNBOUNDED))
    records: list[Record] = []
    for line in reader:
        if not line.complete and line.start >= segs[1].start:
            break
        records.append(walker.record(line))
        if len(records) >= index_build_worker.BATCH:
            break
    if not records or records[0].pos != turn.pos:
        raise HistoryMoved("the transcript changed under the rebuild")
    return Batch.of(records, records[-1].end, turn.number)


def _theirs(number: int) -> bool:
    """The batches a worker makes: all but one in each :data:`_SHARE` (this process also
    inserts every batch into SQLite, about a third of the work; with two in three, sampled
    on 8 MB rebuilds, both processes were busy for about as long)."""
    return number % _SHARE != 0


_SHARE = 3


def _learn(batch: Batch, seen: _Known) -> Batch:
    if not seen.full():
        seen.add(batch.distinct())
    return batch


def _worker_batches(segs: list[Segment], chat_start: int) -> Iterator[Batch | _Turn | _End]:
    """What the worker sends: its share of the batches (:func:`_theirs`), a :class:`_Turn` in
    the place of each of the others, then an :class:`_End`."""
    reader = ForwardReader(segs, FwdState(0), Budget(_UNBOUNDED, _UNBOUNDED))
    walker, scan, size = Walker(), Scan(), index_build_worker.BATCH
    records: list[Record] = []
    count = number = 0
    theirs = _theirs(0)
    for line in reader:
        if not line.complete and line.start >= chat_start:
            scan.torn = line.start
            break
        if theirs:
            records.append(walker.record(line))
        else:
            if count == 0:
                yield _Turn(number, line.start, walker.win, walker.wid, walker.hwin)
            walker.follow(line)
        count += 1
        if count >= size:
            if theirs:
                yield Batch.of(records, line.end, number)
            records, count, number = [], 0, number + 1
            theirs = _theirs(number)
    if records:
        yield Batch.of(records, records[-1].end, number)
    yield _End(walker.win, walker.wid, walker.hwin, scan.torn)
