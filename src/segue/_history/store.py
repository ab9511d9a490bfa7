"""HistoryStore: the crash-safe JSONL transcript store (SPEC.md §3, R28-R30, R34).

Invariants:

* Every mutation runs under the workspace's cross-process lock and starts with recovery, so
  it always builds on a committed state.
* A batch append is one ``write`` of all its lines at the end of ``chat.jsonl``, then fsync
  (unless ``durable=False``): one sync per acknowledged batch. A pending receipt published
  first journals where the batch starts, where it must end and its digest; recovery keeps
  the batch if it is all there and cuts it off otherwise, and readers never show it half
  (see ``visibility``). Cost is proportional to the batch: no file is rewritten on append.
* ``historySequence`` is assigned here only, strictly increasing, from the sidecar's floor
  when segue's own receipt vouches for the files, else from the files themselves (re-read
  under the lock, so another process's or Xum's appends are seen), never below the floor.
* A batch holding a durable boundary (a reset row or a compaction boundary) rotates: rows
  before the newest boundary move to the archive (``rotation``).
* Receipts (R29): pending before, stable after; a verified append keeps the epoch, every
  other mutation gets a new one. The receipt is Xum's format; the journal and the floor are
  in segue's sidecar (``sidecar``), written with it under the same lock.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, BinaryIO

from segue._context.boundaries import is_boundary
from segue._context.floor import is_floor_line
from segue._errors import FileError, ReceiptError, StoreError
from segue._fsutil import (
    check_regular,
    describe_os_error,
    file_error,
    fsync_dir,
    keep_private,
    open_regular,
    open_regular_file,
    write_all,
)
from segue._history import lock as _lock
from segue._history.batch import encode_batch, matches_item, parse_import, stamp
from segue._history.inflight import refuse_if_streaming
from segue._history.marker import Marker, remove_marker, write_marker
from segue._history.paths import paths
from segue._history.protocol import Entry, entry_of
from segue._history.quarantine import quarantined, record_rewrite, rewrite_line
from segue._history.receipt import (
    AppendJournal,
    FileStamp,
    Receipt,
    current_stamps,
    new_epoch,
    read_receipt,
    receipt_matches,
    sequence_floor,
    stamp_of,
    write_receipt,
)
from segue._history.recovery import recover_locked, truncate_to
from segue._history.reports import RecoveryReport, VerifyReport
from segue._history.rotation import rotate
from segue._history.scan import (
    MAX_LINE,
    Source,
    StoredLine,
    scan_backward,
    scan_backward_file,
    scan_forward_file,
)
from segue._history.sequence import disk_next_sequence
from segue._history.verify import verify_layout
from segue._history.visibility import visible_bounds
from segue._messages import Row, encode_row
from segue._workspace import Layout

if TYPE_CHECKING:
    from segue._history.watch import Watch


class HistoryStore:
    """The transcript of one workspace on disk."""

    def __init__(
        self,
        layout: Layout,
        *,
        durable: bool = True,
        lock_timeout: float = 30.0,
        sync_journal: bool = False,
    ) -> None:
        """``durable``: fsync every acknowledged batch and rewrite (R28). ``sync_journal``:
        also fsync the pending receipt before the batch is written, which extends the
        all-or-nothing guarantee from process crashes (``kill -9``, the R28 bar) to power
        loss, at the price of a second sync per append (about 2x a bare write+fsync)."""
        self.layout = layout
        self.durable = durable
        self.lock_timeout = lock_timeout
        self.sync_journal = sync_journal and durable
        #: set when the last mutation was accepted but its stable receipt could not be written
        self.last_receipt_error: ReceiptError | None = None

    def close(self) -> None:
        """Nothing to give back: every call opens and closes what it reads."""

    def __enter__(self) -> HistoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def watch(self) -> Watch:
        """What ``history follow`` waits on: inotify (else polling) on this workspace's files."""
        from segue._history.watch import files_watch

        return files_watch(self.layout)

    def sibling(self, workspace_id: str) -> HistoryStore:
        """The JSONL store of another workspace of the same home, with these settings."""
        return HistoryStore(
            Layout(self.layout.home, workspace_id),
            durable=self.durable,
            lock_timeout=self.lock_timeout,
            sync_journal=self.sync_journal,
        )

    # -- locking and recovery ----------------------------------------------------------------

    def locked(self) -> AbstractContextManager[None]:
        return _lock.hold(paths(self.layout).lock, self.lock_timeout)

    def mutating(self) -> AbstractContextManager[None]:
        """The lock for a change to the session directory, refused before anything is
        written (the lock file included) while a Xum stream may be in progress."""
        refuse_if_streaming(self.layout)
        return self.locked()

    def read_locked(self) -> AbstractContextManager[None]:
        """The lock as a reader takes it: shared, never creating anything (see ``lock``).
        Where there is no session directory there is nothing to read and nothing to lock."""
        p = paths(self.layout)
        if not os.path.lexists(p.session_dir):
            return contextlib.nullcontext()
        if not any(os.path.lexists(f) for f in (p.lock, p.chat, p.archive)):
            # Nothing written yet (a writer makes the lock before its first row): nothing to
            # read, and no reason to tell the user that it was read without the lock.
            return contextlib.nullcontext()
        return _lock.hold(p.lock, self.lock_timeout, shared=True)

    def _check_files(self, action: str) -> None:
        """Refuse, naming the path, a transcript file that is not a regular file (a symlink,
        directory, FIFO or device): segue never reads or writes through one (``fsutil``)."""
        p = paths(self.layout)
        if os.path.lexists(p.session_dir) and not p.session_dir.is_dir():
            raise FileError(
                f"cannot {action} the transcript: {p.session_dir} is not a directory",
                path=p.session_dir,
            )
        for path in (p.chat, p.archive):
            check_regular(path, action)

    def recover(self) -> RecoveryReport:
        with self.mutating():
            return self._recover()

    def _recover(self) -> RecoveryReport:
        return recover_locked(self.layout, durable=self.durable)

    def _prepare(self) -> tuple[Receipt | None, bool]:
        """Recover, then return the receipt and whether it vouches for both files now."""
        self._check_files("write")
        d = paths(self.layout).session_dir
        if not d.is_dir():
            try:
                d.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise file_error(exc, d, "create the session directory") from None
            if self.durable:
                fsync_dir(d.parent)
        # R38: the home and the session directory 0700, their files 0600, on every write.
        # Tightening a wider file changes its ctime and nothing else: a receipt that vouched
        # for the files before is published again in its epoch with their new stamps, so a
        # mode change is never an untracked change (no cursor expires for it).
        before = read_receipt(self.layout)
        vouched = receipt_matches(before, self.layout)
        keep_private(self.layout.home, d.parent, d, files_in=d)
        if vouched and before is not None and not receipt_matches(before, self.layout):
            chat, archive = current_stamps(self.layout)
            with contextlib.suppress(ReceiptError):  # then cursors expire once: no damage
                self._publish(dataclasses.replace(before, chat=chat, archive=archive))
        receipt = read_receipt(self.layout)
        report = recover_locked(self.layout, durable=self.durable, receipt=receipt)
        if report.receipt_verified:
            return receipt, True
        receipt = read_receipt(self.layout)  # recovery may have republished it
        return receipt, receipt_matches(receipt, self.layout)

    def _next_locked(self, receipt: Receipt | None) -> int:
        if receipt_matches(receipt, self.layout):
            assert receipt is not None
            return receipt.next_sequence
        floor = receipt.next_sequence if receipt is not None else sequence_floor(self.layout)
        return max(floor, disk_next_sequence(self.layout))

    def next_sequence(self) -> int:
        with self.locked():
            return self._next_locked(read_receipt(self.layout))

    def _publish(self, receipt: Receipt) -> None:
        write_receipt(self.layout, receipt, durable=self.durable)

    def _finalize(
        self,
        epoch: str,
        next_sequence: int,
        stamps: tuple[FileStamp | None, FileStamp | None] | None = None,
        *,
        closes_journal: bool = False,
    ) -> None:
        """Publish the stable receipt after an accepted change. R29: failing here expires
        cursors (the pending receipt stays) but does not make the change a failure.
        ``stamps`` (chat, archive) may be passed when the caller knows them exactly."""
        chat, archive = stamps if stamps is not None else current_stamps(self.layout)
        try:
            write_receipt(
                self.layout,
                Receipt("stable", epoch, chat, archive, next_sequence=next_sequence),
                durable=False,  # a lost stable receipt only expires cursors
                # the pending sidecar already holds the floor and vouches for this receipt
                sidecar=not closes_journal,
            )
            self.last_receipt_error = None
        except ReceiptError as exc:
            self.last_receipt_error = exc

    # -- append --------------------------------------------------------------------------------

    def append(self, rows: Sequence[Row]) -> list[Row]:
        if not rows:
            return []
        with self.mutating():
            receipt, matched = self._prepare()
            if matched:
                assert receipt is not None
                first = receipt.next_sequence
            else:
                first = self._next_locked(receipt)
            stored = stamp(rows, first, self.layout.workspace_id)
            data, cut_in_batch = encode_batch(stored)
            after = first + len(stored)
            epoch = receipt.epoch if receipt is not None and matched else new_epoch()
            chat_path = paths(self.layout).chat
            fd = open_regular(chat_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            assert fd is not None
            try:
                before = os.fstat(fd)
                if before.st_size == 0 and self.durable:
                    fsync_dir(paths(self.layout).session_dir)  # a new chat file's name must persist
                journal = AppendJournal(
                    before.st_dev,
                    before.st_ino,
                    before.st_size,
                    before.st_size + len(data),
                    hashlib.sha256(data).hexdigest(),
                )
                chat: FileStamp | None
                archive: FileStamp | None
                if matched:
                    assert receipt is not None
                    chat, archive = stamp_of(before), receipt.archive
                else:
                    chat, archive = current_stamps(self.layout)
                # The journal needs no sync against kill -9: the page cache outlives the
                # process, so a killed writer's pending receipt is always there for recovery.
                write_receipt(
                    self.layout,
                    Receipt("pending", epoch, chat, archive, after, journal),
                    durable=self.sync_journal,
                )
                try:
                    write_all(fd, data)
                    if self.durable:
                        os.fsync(fd)
                except OSError as exc:
                    raise self._roll_back(fd, before, first, exc) from None
                now = os.fstat(fd)
            finally:
                os.close(fd)
            # Verified: chat was exactly as last checked under the lock when we opened it
            # (a writer that ignores the lock may have slipped in since the check), and it
            # grew by exactly our bytes. Otherwise the pending receipt stays: readers do not
            # trust the files, and the next locked operation runs full recovery (journal,
            # torn tails, the rotation the batch calls for) and publishes a new epoch, so
            # neither a cursor nor recovery's fast path ever vouches for a foreign change.
            expected = receipt.chat if matched and receipt is not None else chat
            untouched = stamp_of(before) == expected or (expected is None and before.st_size == 0)
            verified = untouched and now.st_ino == before.st_ino and now.st_size == journal.end
            if not verified:
                return stored
            if cut_in_batch is not None and before.st_size + cut_in_batch > 0:
                # A rotation is another mutation: new epoch. The journal stays in the pending
                # receipt so a crash before the rotation's marker still leads to it.
                epoch = new_epoch()
                chat, archive = current_stamps(self.layout)
                try:
                    self._publish(Receipt("pending", epoch, chat, archive, after, journal))
                except ReceiptError as exc:
                    # The batch is durable and acknowledged; only its rotation waits (the
                    # next boundary batch rotates everything before it).
                    self.last_receipt_error = exc
                    return stored
                rotate(self.layout, before.st_size + cut_in_batch, durable=self.durable)
            elif matched:
                # Nothing but this write touched the files since the receipt was verified
                # under the lock: the stable receipt's stamps are the fstat just taken.
                self._finalize(epoch, after, (stamp_of(now), archive), closes_journal=True)
                return stored
            self._finalize(epoch, after)
            return stored

    def _roll_back(
        self, fd: int, before: os.stat_result, first: int, exc: OSError
    ) -> FileError:
        """The batch could not be written whole (a full disk, an I/O error): cut chat back to
        where the batch began, so it is not there at all, and publish a stable receipt for
        the files as they now are. The error says whether that worked: a failure is only
        reported as "not written" when the batch really is gone."""
        chat_path = paths(self.layout).chat
        try:
            os.ftruncate(fd, before.st_size)
            if self.durable:
                os.fsync(fd)
        except OSError:
            return FileError(
                f"{describe_os_error(exc, chat_path)}; the batch may be partly written "
                "(the next change to this workspace removes it)",
                path=chat_path,
                errno=exc.errno,
            )
        chat, archive = current_stamps(self.layout)
        with contextlib.suppress(ReceiptError):
            # In place, one page that already exists: this needs no new disk space. If it
            # fails anyway, the pending receipt's journal says the batch is absent.
            write_receipt(
                self.layout,
                # the batch's sequences were never seen by anyone: the next batch takes them
                Receipt("stable", new_epoch(), chat, archive, next_sequence=first),
                durable=self.durable,
            )
        return FileError(
            f"{describe_os_error(exc, chat_path)}; nothing was written",
            path=chat_path,
            errno=exc.errno,
        )

    def import_rows(self, data: bytes) -> list[Row]:
        return self.append(parse_import(data))

    # -- rewrites ------------------------------------------------------------------------------

    def quarantine(self, item_id: str, *, send_failure: str | None = None) -> Row:
        with self.mutating():
            self._prepare()
            found: tuple[Source, StoredLine] | None = None
            p = paths(self.layout)
            # The newest row of that item: newest first, so a recent row (a failed send's
            # message) is found without reading the whole history.
            for source, path in (("chat", p.chat), ("archive", p.archive)):
                for line in scan_backward(path, source):  # type: ignore[arg-type]
                    if line.row is not None and matches_item(line.row, item_id):
                        found = (source, line)  # type: ignore[assignment]
                        break
                if found is not None:
                    break
            if found is None:
                raise StoreError(f"no item {item_id!r} in the transcript", code="item_not_found")
            source, line = found
            assert line.row is not None
            if is_boundary(line.row) or is_floor_line(line.row, line.reset_marker):
                # R11: the system never erases a floor (or any boundary) by a rewrite.
                raise StoreError(
                    f"item {item_id!r} is a context boundary and cannot be quarantined",
                    code="not_quarantinable",
                )
            new = quarantined(line.row, send_failure=send_failure)
            if new is line.row:
                return new
            receipt = read_receipt(self.layout)
            vouched = receipt.epoch if receipt and receipt_matches(receipt, self.layout) else None
            floor = self._next_locked(receipt)
            epoch = new_epoch()
            chat, archive = current_stamps(self.layout)
            self._publish(Receipt("pending", epoch, chat, archive, floor))
            done = rewrite_line(self.layout, source, line, encode_row(new), durable=self.durable)
            # the history index re-derives this one row instead of a rebuild (SPEC.md §7)
            record_rewrite(self.layout, done, before=vouched, after=epoch)
            self._finalize(epoch, floor)
            return new

    def drop_last(self, item_id: str) -> Row | None:
        """Remove the newest row of the transcript when it is ``item_id`` (a library
        session's ``pop``). Returns the removed row, or None when the newest line is another
        row, a boundary (R11: the system never erases a floor or a window start), a line that
        is not a row, or absent. A truncation under the lock with a new epoch (R29, R34):
        cursors expire, and the sequence floor stays, so the number is never reused."""
        with self.locked():
            self._prepare()
            last = next(scan_backward(paths(self.layout).chat, "chat"), None)
            if (
                last is None
                or last.row is None
                or last.reset_marker
                or is_boundary(last.row)
                or not matches_item(last.row, item_id)
            ):
                return None
            floor = self._next_locked(read_receipt(self.layout))
            epoch = new_epoch()
            chat, archive = current_stamps(self.layout)
            self._publish(Receipt("pending", epoch, chat, archive, floor))
            truncate_to(self.layout, "chat", last.offset, durable=self.durable)
            self._finalize(epoch, floor)
            return last.row

    def clear_all(self) -> None:
        with self.mutating():
            self._prepare()
            floor = self._next_locked(read_receipt(self.layout))
            epoch = new_epoch()
            chat, archive = current_stamps(self.layout)
            self._publish(Receipt("pending", epoch, chat, archive, floor))
            write_marker(self.layout, Marker(op="clear"), durable=self.durable)
            for path in (paths(self.layout).chat, paths(self.layout).archive):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)
            if self.durable:
                fsync_dir(paths(self.layout).session_dir)
            remove_marker(self.layout, durable=self.durable)
            self._finalize(epoch, floor)

    # -- reads -----------------------------------------------------------------------------------

    def _snapshot(self) -> tuple[BinaryIO | None, int, BinaryIO | None, int]:
        """Open both files under the (shared) lock. The open descriptors keep reading the
        same bytes even if a rotation or rewrite replaces a file afterwards."""
        with self.read_locked():
            self._check_files("read")
            bounds = visible_bounds(self.layout)
            archive = open_regular_file(paths(self.layout).archive)
            chat = open_regular_file(paths(self.layout).chat)
            # Only up to the last newline: a torn tail is not data, and once the lock is
            # released a writer may recover it away and write a batch over those offsets,
            # whose first lines would then show without the rest (R28).
            archive_end = _complete_end(archive, bounds.archive_end)
            chat_end = _complete_end(chat, bounds.chat_end)
        return archive, archive_end, chat, chat_end

    def lines(self, *, max_line: int | None = MAX_LINE) -> Iterator[StoredLine]:
        """Every complete line, oldest first. ``max_line=None``: no line is too long (the
        user's own views and exports are complete; the model's tool keeps R24's bound)."""
        limit = sys.maxsize if max_line is None else max_line
        archive, archive_end, chat, chat_end = self._snapshot()
        try:
            if archive is not None:
                yield from scan_forward_file(
                    archive, "archive", 0, end=archive_end, max_line=limit
                )
            if chat is not None:
                yield from scan_forward_file(chat, "chat", 0, end=chat_end, max_line=limit)
        finally:
            for f in (archive, chat):
                if f is not None:
                    f.close()

    def lines_reverse(self) -> Iterator[StoredLine]:
        archive, archive_end, chat, chat_end = self._snapshot()
        try:
            if chat is not None:
                yield from scan_backward_file(chat, "chat", chat_end)
            if archive is not None:
                yield from scan_backward_file(archive, "archive", archive_end)
        finally:
            for f in (archive, chat):
                if f is not None:
                    f.close()

    def rows(self, *, max_line: int | None = MAX_LINE) -> Iterator[Row]:
        """Every row, oldest first; ``max_line=None``: complete (no line is too long)."""
        for line in self.lines(max_line=max_line):
            if line.row is not None:
                yield line.row

    def entries(self) -> Iterator[Entry]:
        """Every entry, oldest first, complete; the chat file's positions follow the
        archive's, so ``end`` is a position in the whole history."""
        archive, archive_end, chat, chat_end = self._snapshot()
        try:
            if archive is not None:
                for line in scan_forward_file(
                    archive, "archive", 0, end=archive_end, max_line=sys.maxsize
                ):
                    yield entry_of(line, 0)
            if chat is not None:
                for line in scan_forward_file(chat, "chat", 0, end=chat_end, max_line=sys.maxsize):
                    yield entry_of(line, archive_end)
        finally:
            _close(archive, chat)

    def entries_reverse(self) -> Iterator[Entry]:
        """Every entry, newest first, each line bounded by ``MAX_LINE`` (a longer one has
        no row, and its reset marker is still computed over every byte)."""
        archive, archive_end, chat, chat_end = self._snapshot()
        try:
            if chat is not None:
                for line in scan_backward_file(chat, "chat", chat_end):
                    yield entry_of(line, archive_end)
            if archive is not None:
                for line in scan_backward_file(archive, "archive", archive_end):
                    yield entry_of(line, 0)
        finally:
            _close(archive, chat)

    def verify(self) -> VerifyReport:
        # Under the lock: an append or rewrite in flight in another process looks exactly
        # like an interrupted one (pending receipt, marker), which is damage only once no
        # writer holds the lock.
        with self.read_locked():
            self._check_files("verify")
            return verify_layout(self.layout)


def _close(*files: BinaryIO | None) -> None:
    for f in files:
        if f is not None:
            f.close()


def _complete_end(f: BinaryIO | None, end: int) -> int:
    """Offset just past the last newline in ``f[0:end]`` (0 when there is none)."""
    if f is None:
        return 0
    pos = end
    while pos > 0:
        n = min(1 << 16, pos)
        at = os.pread(f.fileno(), n, pos - n).rfind(b"\n")
        if at >= 0:
            return pos - n + at + 1
        pos -= n
    return 0

