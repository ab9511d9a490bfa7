"""A rebuild's lines as batches of records, made in this process or, where it pays, three
in four of them by a forked worker (:mod:`segue._retrieval.index_build_worker`). I/O.

Both processes read every line and follow the window state (:meth:`Walker.step`: which
window each row is in depends on every boundary before it); each makes the batches that are
its own, and this process inserts all of them, in order, so the index is the same file,
row for row and token for token, whichever made a batch (tests/index/test_rebuild_worker.py).
Analysing a row (classification, projection, the words and literal analyses) is about two
thirds of a rebuild's work and inserting it into SQLite about a third: this process, which
inserts everything, makes one batch in :data:`_SHARE`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from segue._retrieval import index_build_worker
from segue._retrieval.index_build import (
    _BATCH,
    _KNOWN_CHARS,
    _UNBOUNDED,
    Batch,
    Record,
    Walker,
    _Known,
)
from segue._retrieval.reader import Budget, ForwardReader, FwdState, RawLine, Segment

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
        yield from (b for b in analyse(reader, walker, chat_start, scan, seen) if b is not None)
        return
    with index_build_worker.Worker(
        lambda: _worker_batches(segs, chat_start), close=lock_fd
    ) as worker:
        own = analyse(reader, walker, chat_start, scan, seen, size=index_build_worker.BATCH,
                      mine=lambda n: not _theirs(n))  # fmt: skip
        yield from _merged(own, worker.batches(), seen)


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
    mine: Callable[[int], bool] | None = None,
) -> Iterator[Batch | None]:
    """The lines as batches of ``size`` lines, oldest first; ``seen`` learns their lines
    (while it has room) and ``scan`` where they ended. With ``mine``, only the batches whose
    number it accepts are made; for the others the lines are only followed (the window
    state, :meth:`Walker.step`) and None stands in for the batch."""
    records: list[Record] = []
    count = number = 0
    full = mine is None or mine(0)
    for line in lines:
        if not line.complete and line.start >= chat_start:
            scan.torn = line.start
            break
        if full:
            records.append(walker.record(line))
        else:
            walker.follow(line)
        count += 1
        if count >= size:
            yield _learn(Batch.of(records, line.end, number), seen) if full else None
            records, count, number = [], 0, number + 1
            full = mine is None or mine(number)
    if count:
        yield _learn(Batch.of(records, records[-1].end, number), seen) if full else None


def _merged(own: Iterable[Batch | None], theirs: Iterator[Batch], seen: _Known) -> Iterator[Batch]:
    """This process's batches with the worker's in their places, in order."""
    for number, mine in enumerate(own):
        batch = mine if mine is not None else next(theirs, None)
        if batch is None or batch.number != number:
            raise index_build_worker.WorkerLost("the rebuild's worker fell out of step")
        if mine is None:
            _learn(batch, seen)
        yield batch
    if next(theirs, None) is not None:  # also reads its end, or the error it met
        raise index_build_worker.WorkerLost("the rebuild's worker fell out of step")


def _theirs(number: int) -> bool:
    """The batches a worker makes: three in each :data:`_SHARE` (this process also inserts
    every batch into SQLite, about a third of the work)."""
    return number % _SHARE != 0


_SHARE = 4


def _learn(batch: Batch, seen: _Known) -> Batch:
    if not seen.full():
        seen.add(batch.distinct())
    return batch


def _worker_batches(segs: list[Segment], chat_start: int) -> Iterator[Batch]:
    """What the worker sends: its share of the batches (:func:`_theirs`)."""
    reader = ForwardReader(segs, FwdState(0), Budget(_UNBOUNDED, _UNBOUNDED))
    full = _Known("", 0, set(), _KNOWN_CHARS + 1)  # it learns nothing: this process does
    for batch in analyse(reader, Walker(), chat_start, Scan(), full,
                         size=index_build_worker.BATCH, mine=_theirs):  # fmt: skip
        if batch is not None:
            yield batch
