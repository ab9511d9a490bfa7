"""The store seam: the protocols every transcript store implements (the JSONL store, the
in-memory one and PostgreSQL's).

* :class:`TranscriptStore` — the core every caller uses: append a batch, read the rows and
  entries oldest or newest first, the next sequence, quarantine, a hard clear, and the
  workspace lock. Nothing in it names a file or a byte offset: a session, the library's
  ``open_session``/``open_history`` and the framework integrations written against it work
  on every store alike.
* :class:`MaintainedStore` — what only maintenance uses (``segue history verify``,
  ``recover``, ``import``, a migration): the stored lines as the store keeps them (for the
  JSONL store its files' sources and byte offsets), verification, recovery and import.
* :class:`ReadsSnapshots` — a store whose every read is one committed snapshot
  (PostgreSQL's): a reader needs no lock.
* :class:`RemovesNewest` — a store that can take back its newest row (the JSONL store; the
  PostgreSQL transcript only grows).

What needs byte offsets beyond this (the history index, the bounded look-back scan) takes
them from the JSONL store itself, not through these protocols.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol, Self, runtime_checkable

from segue._history.reports import RecoveryReport, VerifyReport
from segue._history.scan import StoredLine
from segue._messages import Row


@dataclass(frozen=True)
class Entry:
    """One entry of a transcript as every store reads it back."""

    #: the row; None when the entry is not readable as one (or too large to read back
    #: newest first in bounded memory)
    row: Row | None
    #: the entry is not a clean row but holds the reset key: with ``row``, what
    #: :func:`segue._context.floor.is_floor_line` judges (R11: damage fails closed)
    reset_marker: bool
    #: the entry's end position in the whole history, the name of the window an unreadable
    #: floor opens (``w:raw:<end>``, as ``session_history`` names it)
    end: int
    #: the size of the entry's stored form (without its line end)
    size: int


def entry_of(line: StoredLine, start: int) -> Entry:
    """The entry of a stored line whose file begins at history position ``start``."""
    return Entry(line.row, line.reset_marker, start + line.end, line.length - 1)


@runtime_checkable
class TranscriptStore(Protocol):
    """The core store protocol (see the module's docstring)."""

    def locked(self) -> AbstractContextManager[None]:
        """The workspace's exclusive lock, for a read-modify-append sequence (re-entrant:
        the store's own mutations inside the block take it as its holder)."""
        ...

    def read_locked(self) -> AbstractContextManager[None]:
        """The lock a reader takes so two passes see the same history."""
        ...

    def append(self, rows: Sequence[Row]) -> list[Row]:
        """One all-or-nothing batch; returns the rows as stored (sequence, workspace)."""
        ...

    def rows(self) -> Iterator[Row]:
        """Every row, oldest first, in bounded memory: a store may leave out a line too
        long to read that way (the JSONL and PostgreSQL stores: over 1 MiB). The owner's
        complete view is :func:`every_row`."""
        ...

    def entries(self) -> Iterator[Entry]:
        """Every entry, oldest first, complete (a floor that is not a row included)."""
        ...

    def entries_reverse(self) -> Iterator[Entry]:
        """Every entry, newest first, in bounded memory."""
        ...

    def next_sequence(self) -> int:
        """The ``historySequence`` the next appended row gets."""
        ...

    def quarantine(self, item_id: str, *, send_failure: str | None = None) -> Row: ...

    def clear_all(self) -> None:
        """A hard clear: every row goes; no sequence is ever reused."""
        ...

    def close(self) -> None:
        """Give back what the store holds between calls (PostgreSQL's connections; the JSONL
        and in-memory stores hold nothing); idempotent."""
        ...

    def __enter__(self) -> Self: ...
    def __exit__(self, *exc: object) -> None:
        """Closes the store (``with store:``)."""
        ...

    def sibling(self, workspace_id: str) -> TranscriptStore:
        """The store of another workspace of the same home, of this store's kind (a task's
        workspace is kept where its parent's is)."""
        ...


def every_row(store: TranscriptStore) -> Iterator[Row]:
    """Every row of ``store``, oldest first, complete: no line is too long (the person's own
    views and exports; the model's tool keeps R24's bound)."""
    for entry in store.entries():
        if entry.row is not None:
            yield entry.row


@runtime_checkable
class MaintainedStore(TranscriptStore, Protocol):
    """The core and what maintenance commands use (see the module's docstring)."""

    def lines(self) -> Iterator[StoredLine]: ...
    def lines_reverse(self) -> Iterator[StoredLine]: ...
    def recover(self) -> RecoveryReport: ...
    def verify(self) -> VerifyReport: ...
    def import_rows(self, data: bytes) -> list[Row]: ...


@runtime_checkable
class ReadsSnapshots(Protocol):
    """A store each of whose reads is one committed snapshot (PostgreSQL's): a reader sees no
    half-written batch without taking :meth:`TranscriptStore.read_locked`."""

    def snapshot(self) -> AbstractContextManager[object]:
        """One committed snapshot of the workspace, for the reads inside the block."""
        ...


@runtime_checkable
class RemovesNewest(Protocol):
    def drop_last(self, item_id: str) -> Row | None:
        """Remove the newest row when it is ``item_id`` and not a boundary; else None."""
        ...


__all__ = [
    "Entry", "MaintainedStore", "ReadsSnapshots", "RemovesNewest", "TranscriptStore", "entry_of",
    "every_row",
]
