"""Recovery (R8, R34): bring the files back to a committed state. Caller holds the lock.

Run by every locked mutation before it changes anything, and by ``HistoryStore.recover``.
Order, each step deterministic and idempotent (a crash during recovery is recovered again):

1. A transaction marker (rotation, rewrite, truncation, clear) is completed or rolled back.
2. A pending receipt's append journal is resolved: if ``chat[from:to]`` is all there with the
   recorded digest the batch is whole and kept (and, if it holds a durable boundary, the
   rotation it missed is done now); otherwise the partial batch is cut off at ``from``.
3. A torn tail (bytes after the last newline, not covered by a journal) is removed: it is an
   unacknowledged write, not data. The exception is a tail that mentions a reset boundary
   (R11: the system never erases a possible floor): it is sealed with a newline and survives
   as an unparseable line.
4. Unless the receipt is stable and matches both files, a stable receipt with a new epoch is
   published (recovery expires cursors, R26).
"""

from __future__ import annotations

import contextlib
import errno
import os
from contextlib import closing
from pathlib import Path

from segue._context.floor import KeyWatch
from segue._errors import RowDecodeError
from segue._fsutil import (
    file_size,
    fsync_dir,
    open_regular,
    open_regular_file,
    read_range,
    sha256_range,
    write_all,
)
from segue._history.marker import (
    Marker,
    MarkerUnreadable,
    expect_of,
    marker_path,
    read_marker,
    remove_marker,
    write_marker,
)
from segue._history.paths import paths
from segue._history.receipt import (
    Receipt,
    current_stamps,
    new_epoch,
    read_receipt,
    receipt_matches,
    sequence_floor,
    write_receipt,
)
from segue._history.reports import RecoveryReport
from segue._history.rotation import batch_cut, finish_rotation, rotate
from segue._history.scan import Source, scan_backward
from segue._history.sequence import disk_next_sequence
from segue._messages import decode_row
from segue._workspace import Layout

_WINDOW = 64 * 1024  # digest window before a truncation point


class _Unread:
    """Marks "the caller has not read the receipt": None already means "there is none"."""


UNREAD = _Unread()


def recover_locked(
    layout: Layout, *, durable: bool, receipt: Receipt | _Unread | None = UNREAD
) -> RecoveryReport:
    """Recover; ``receipt`` may pass in the receipt the caller already read under the lock."""
    report = RecoveryReport()
    if not paths(layout).session_dir.exists():
        return report
    if isinstance(receipt, _Unread):
        receipt = read_receipt(layout)
    if receipt_matches(receipt, layout) and not marker_path(layout).exists():
        # Fast path: a stable receipt vouches for both files exactly as a verified change
        # left them (inode, size, mtime and ctime, which no other writer can restore), and no
        # transaction is open, so there is no journal, torn tail or rewrite to deal with.
        report.receipt_verified = True
        return report
    try:
        marker = read_marker(layout)
    except MarkerUnreadable as exc:
        # A marker we cannot read names no change we could finish; the files themselves are
        # still checked below (torn tails, journal), and nothing is deleted on its say-so.
        report.problems.append(f"unreadable transaction marker ignored: {exc}")
        with contextlib.suppress(OSError):
            os.replace(marker_path(layout), marker_path(layout).with_suffix(".json.bad"))
        marker = None
    if marker is not None:
        _finish_marker(layout, marker, report, durable=durable)
    if receipt is not None and receipt.state == "pending" and receipt.append is not None:
        _resolve_journal(layout, receipt, report, durable=durable)
    for source in ("chat", "archive"):
        _fix_torn_tail(layout, source, report, durable=durable)
    if report.changed or not receipt_matches(receipt, layout):
        floor = max(
            receipt.next_sequence if receipt is not None else sequence_floor(layout),
            disk_next_sequence(layout),
        )
        chat, archive = current_stamps(layout)
        write_receipt(
            layout,
            Receipt("stable", new_epoch(), chat, archive, next_sequence=floor),
            durable=durable,
        )
        report.new_epoch = True
        if receipt is None or receipt.state != "stable" or report.changed:
            report.actions.append("published a stable receipt with a new epoch")
        else:
            report.actions.append("receipt did not match the files: new epoch")
    return report


def _finish_marker(layout: Layout, m: Marker, report: RecoveryReport, *, durable: bool) -> None:
    if m.op == "rotate":
        finish_rotation(layout, m, report, durable=durable)
    elif m.op == "rewrite":
        _finish_rewrite(layout, m, report, durable=durable)
    elif m.op == "truncate":
        _finish_truncate(layout, m, report, durable=durable)
    else:
        for path in (paths(layout).chat, paths(layout).archive):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
        if durable:
            fsync_dir(paths(layout).session_dir)
        remove_marker(layout, durable=durable)
        report.actions.append("completed an interrupted clear")


def _path(layout: Layout, target: str | None) -> Path:
    return paths(layout).archive if target == "archive" else paths(layout).chat


def _finish_rewrite(layout: Layout, m: Marker, report: RecoveryReport, *, durable: bool) -> None:
    assert m.final is not None
    assert m.temp is not None
    target = paths(layout).archive if m.target == "archive" else paths(layout).chat
    temp = paths(layout).session_dir / m.temp
    if m.final.holds(target):
        report.actions.append(f"completed an interrupted rewrite of {target.name}")
    elif m.final.holds(temp) and (m.before is None or m.before.holds(target)):
        os.replace(temp, target)
        if durable:
            fsync_dir(paths(layout).session_dir)
        report.actions.append(f"completed an interrupted rewrite of {target.name}")
    else:
        report.actions.append(f"rolled back an interrupted rewrite of {target.name}")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(temp)
    remove_marker(layout, durable=durable)


def truncate_to(layout: Layout, source: Source, size: int, *, durable: bool) -> None:
    """Cut ``source`` back to ``size`` bytes as a marked transaction (R34)."""
    path = paths(layout).archive if source == "archive" else paths(layout).chat
    start = max(0, size - _WINDOW)
    window = read_range(path, start, size)
    marker = Marker(
        op="truncate", target=source, ino=os.stat(path).st_ino, final=expect_of(window, start=start)
    )
    write_marker(layout, marker, durable=durable)
    _do_truncate(path, size, durable=durable)
    remove_marker(layout, durable=durable)


def _do_truncate(path: os.PathLike[str], size: int, *, durable: bool) -> None:
    fd = open_regular(path, os.O_WRONLY)
    if fd is None:
        raise FileNotFoundError(errno.ENOENT, "no such file", str(path))
    try:
        os.ftruncate(fd, size)
        if durable:
            os.fsync(fd)
    finally:
        os.close(fd)


def _finish_truncate(layout: Layout, m: Marker, report: RecoveryReport, *, durable: bool) -> None:
    assert m.final is not None
    path = _path(layout, m.target)
    size = file_size(path)
    same = size is not None and os.stat(path).st_ino == m.ino
    if same and size is not None and size >= m.final.size and m.final.prefix_holds(path):
        if size > m.final.size:
            _do_truncate(path, m.final.size, durable=durable)
        report.actions.append("completed an interrupted truncation")
    else:
        report.problems.append("interrupted truncation: the file changed since; left as found")
    remove_marker(layout, durable=durable)


def _resolve_journal(
    layout: Layout, receipt: Receipt, report: RecoveryReport, *, durable: bool
) -> None:
    j = receipt.append
    assert j is not None
    try:
        st = os.stat(paths(layout).chat)
    except FileNotFoundError:
        return
    if (st.st_dev, st.st_ino) != (j.dev, j.ino):
        return  # chat was replaced since (a rotation finished above): the journal is moot
    size = st.st_size
    if size >= j.end and sha256_range(paths(layout).chat, j.start, j.end) == j.sha256:
        report.actions.append(f"kept a whole batch at chat offset {j.start} (receipt was pending)")
        cut = batch_cut(layout, j.start, j.end)
        if cut is not None and cut > 0:
            if rotate(layout, cut, durable=durable):
                report.actions.append("did the rotation the interrupted batch called for")
            else:
                report.problems.append(
                    "could not do the rotation the interrupted batch called for (left for "
                    "the next boundary; every row is still in chat.jsonl)"
                )
        return
    if j.start <= size <= j.end:
        if size > j.start:
            truncate_to(layout, "chat", j.start, durable=durable)
            report.actions.append(
                f"removed a partial batch ({size - j.start} of {j.end - j.start} bytes) "
                f"at chat offset {j.start}"
            )
        return
    report.problems.append(
        f"pending batch at chat offset {j.start} does not match the file; left as found"
    )


def torn_tail(layout: Layout, source: Source) -> tuple[int, int, bool] | None:
    """(start, size, mentions a reset) of bytes after the last newline; None when clean."""
    path = paths(layout).archive if source == "archive" else paths(layout).chat
    size = file_size(path)
    if not size or read_range(path, size - 1, size) == b"\n":
        return None
    with closing(scan_backward(path, source, size, max_rows=1)) as lines:
        last = next(lines, None)
    start = last.end if last is not None else 0
    return start, size, _mentions_reset(path, start, size)


def _mentions_reset(path: os.PathLike[str], start: int, stop: int) -> bool:
    watch = KeyWatch(forward=True)
    f = open_regular_file(path)
    if f is None:
        return False
    with f:
        f.seek(start)
        left = stop - start
        while left > 0:
            buf = f.read(min(1 << 20, left))
            if not buf:
                break
            if watch.feed(buf):
                return True
            left -= len(buf)
    return False


_MAX_SEALED_ROW = 1 << 20


def _is_complete_row(path: os.PathLike[str], start: int, stop: int) -> bool:
    if stop - start > _MAX_SEALED_ROW:
        return False
    try:
        decode_row(read_range(Path(path), start, stop))
    except RowDecodeError:
        return False
    return True


def _seal(layout: Layout, source: Source, *, durable: bool) -> None:
    fd = open_regular(_path(layout, source), os.O_WRONLY | os.O_APPEND)
    if fd is None:
        return
    try:
        write_all(fd, b"\n")
        if durable:
            os.fsync(fd)
    finally:
        os.close(fd)


def _fix_torn_tail(
    layout: Layout, source: Source, report: RecoveryReport, *, durable: bool
) -> None:
    torn = torn_tail(layout, source)
    if torn is None:
        return
    start, size, reset = torn
    name = "chat-archive.jsonl" if source == "archive" else "chat.jsonl"
    if not reset and _is_complete_row(_path(layout, source), start, size):
        # segue's own appends are journaled, so an unjournaled tail came from another writer;
        # one that is a whole row only lacks its newline (an editor, a copy): it is data.
        _seal(layout, source, durable=durable)
        report.actions.append(f"sealed a complete last row of {name} that had no newline")
        return
    if reset:
        _seal(layout, source, durable=durable)
        report.actions.append(
            f"sealed a torn tail of {name} that mentions a reset boundary (kept, R11)"
        )
        return
    truncate_to(layout, source, start, durable=durable)
    report.actions.append(f"removed a torn tail of {name} ({size - start} bytes at {start})")
