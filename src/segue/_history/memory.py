"""InMemoryStore: the TranscriptStore protocol without a disk, for pure-logic tests.

It keeps the same observable rules as HistoryStore: the store assigns strictly increasing
``historySequence`` values and the workspace id, a batch is all-or-nothing (it is encoded
completely before anything is kept), a batch with a durable boundary rotates the rows before
the newest boundary into the archive, quarantine keeps id and sequence, import refuses a file
with any line that is not a row, and a hard clear never lets a sequence be reused.
Lines are kept as the exact bytes a file would hold, so offsets and lengths match.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager

from segue._context.boundaries import is_boundary
from segue._context.floor import is_floor_bytes, mentions_reset_key, settled_marker
from segue._errors import StoreError
from segue._history.batch import encode_batch, matches_item, parse_import, stamp
from segue._history.protocol import Entry, entry_of
from segue._history.quarantine import quarantined
from segue._history.reports import RecoveryReport, VerifyReport
from segue._history.scan import Source, StoredLine, parse_line
from segue._messages import Row, encode_row


class InMemoryStore:
    def __init__(self, workspace_id: str = "memory") -> None:
        self.workspace_id = workspace_id
        self._files: dict[Source, list[bytes]] = {"archive": [], "chat": []}
        self._next = 0
        self._lock = threading.RLock()

    def close(self) -> None:
        """Nothing to give back (the rows stay: the store is its own memory)."""

    def __enter__(self) -> InMemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def sibling(self, workspace_id: str) -> InMemoryStore:
        """Another workspace's store: in memory too, and empty."""
        return InMemoryStore(workspace_id)

    def locked(self) -> AbstractContextManager[None]:
        return _Held(self._lock)

    def next_sequence(self) -> int:
        return self._next

    def append(self, rows: Sequence[Row]) -> list[Row]:
        if not rows:
            return []
        with self._lock:
            stored = stamp(rows, self._next, self.workspace_id)
            data, cut = encode_batch(stored)
            new = [line + b"\n" for line in data.split(b"\n")[:-1]]
            chat = self._files["chat"]
            if cut is not None:
                index = len(chat) + sum(1 for _ in _lines_before(data, cut))
                self._files["archive"].extend((chat + new)[:index])
                self._files["chat"] = (chat + new)[index:]
            else:
                chat.extend(new)
            self._next += len(stored)
            return stored

    def import_rows(self, data: bytes) -> list[Row]:
        return self.append(parse_import(data))

    def quarantine(self, item_id: str, *, send_failure: str | None = None) -> Row:
        with self._lock:
            found: tuple[Source, int, Row] | None = None
            for source in ("archive", "chat"):
                for i, raw in enumerate(self._files[source]):
                    row = parse_line(raw[:-1])
                    if row is not None and matches_item(row, item_id):
                        found = (source, i, row)
            if found is None:
                raise StoreError(f"no item {item_id!r} in the transcript", code="item_not_found")
            source, i, row = found
            if is_boundary(row) or is_floor_bytes(self._files[source][i][:-1]):
                raise StoreError(
                    f"item {item_id!r} is a context boundary and cannot be quarantined",
                    code="not_quarantinable",
                )
            new = quarantined(row, send_failure=send_failure)
            self._files[source][i] = encode_row(new) + b"\n"
            return new

    def clear_all(self) -> None:
        with self._lock:
            self._files = {"archive": [], "chat": []}

    def recover(self) -> RecoveryReport:
        return RecoveryReport()

    def _stored(self, source: Source) -> list[StoredLine]:
        out: list[StoredLine] = []
        offset = 0
        for raw in self._files[source]:
            body = raw[:-1]
            row = parse_line(body)
            marker = settled_marker(body, row, mentions_reset_key(body))
            out.append(StoredLine(source, offset, len(raw), body, row, marker))
            offset += len(raw)
        return out

    def lines(self) -> Iterator[StoredLine]:
        with self._lock:
            snapshot = self._stored("archive") + self._stored("chat")
        yield from snapshot

    def lines_reverse(self) -> Iterator[StoredLine]:
        with self._lock:
            snapshot = self._stored("archive") + self._stored("chat")
        yield from reversed(snapshot)

    def read_locked(self) -> AbstractContextManager[None]:
        return self.locked()

    def rows(self) -> Iterator[Row]:
        for line in self.lines():
            if line.row is not None:
                yield line.row

    def _entries(self) -> list[Entry]:
        with self._lock:
            archive = self._stored("archive")
            start = archive[-1].end if archive else 0
            return [entry_of(line, 0) for line in archive] + [
                entry_of(line, start) for line in self._stored("chat")
            ]

    def entries(self) -> Iterator[Entry]:
        yield from self._entries()

    def entries_reverse(self) -> Iterator[Entry]:
        yield from reversed(self._entries())

    def verify(self) -> VerifyReport:
        report = VerifyReport(receipt_state="stable")
        last: int | None = None
        for line in self.lines():
            report.lines += 1
            if line.row is None:
                report.warnings.append(f"{line.source} offset {line.offset}: not a row")
                continue
            report.rows += 1
            seq = line.row.sequence
            if seq is not None and last is not None and seq <= last:
                report.problems.append(f"historySequence {seq} after {last} (out of order)")
            if seq is not None:
                last = seq if last is None else max(last, seq)
        return report


def _lines_before(data: bytes, cut: int) -> Iterator[int]:
    pos = 0
    while pos < cut:
        pos = data.index(b"\n", pos) + 1
        yield pos


class _Held(AbstractContextManager[None]):
    def __init__(self, lock: threading.RLock) -> None:
        self._l = lock

    def __enter__(self) -> None:
        self._l.acquire()

    def __exit__(self, *exc: object) -> None:
        self._l.release()
