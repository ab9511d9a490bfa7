"""Rotation: seal the rows before the newest durable boundary into the archive.

``chat.jsonl`` holds the active epoch (newest boundary onward); ``chat-archive.jsonl`` the
sealed rows before it; full history = archive ++ chat. Rotation moves ``chat[0:cut]`` to the
end of the archive, byte for byte (so unparseable lines and malformed reset rows survive
exactly, R11), and replaces chat with ``chat[cut:]``.

Two files change, so a rotation is a transaction (R34). Steps, all under the lock:

1. marker ``rotate``: chat before (whole-file digest), the archive after (digest of the
   appended region), chat after (whole-file digest); durable before anything changes;
2. archive: truncate to its size before (a no-op unless redoing), append ``chat[0:cut]``, fsync;
3. chat: temp file with ``chat[cut:]``, fsync, ``os.replace``, directory fsync;
4. remove the marker.

Recovery finishes from the marker: chat still as before → redo 2-4 (never a duplicate: the
archive is first cut back to its old size); chat already replaced → only 4. Cost is
proportional to the active epoch, never to the archive.

A rotation that fails while it runs (a full disk: the archive or the new chat cannot be
written) is undone on the spot: the archive is cut back to its old size, the temp file and
the marker are removed, and :func:`rotate` returns False. Nothing is lost by that: every row
is still in chat (archive ++ chat is the same history), and the next batch that holds a
boundary rotates everything before it. So a caller never reports an accepted batch as
failed because its rotation could not be done.
"""

from __future__ import annotations

import contextlib
import os

from segue._context.boundaries import is_boundary
from segue._errors import FileError
from segue._fsutil import atomic_write, file_size, open_regular, read_range, write_all
from segue._history.marker import Marker, expect_of, remove_marker, write_marker
from segue._history.paths import paths
from segue._history.reports import RecoveryReport
from segue._history.scan import scan_forward
from segue._workspace import Layout

ROTATE_TEMP = ".chat.jsonl.rotate.tmp"


def batch_cut(layout: Layout, start: int, end: int) -> int | None:
    """Offset in chat of the newest durable boundary among the lines in ``[start, end)``."""
    cut: int | None = None
    for line in scan_forward(paths(layout).chat, "chat", start, end=end):
        if line.row is not None and is_boundary(line.row):
            cut = line.offset
    return cut


def rotate(layout: Layout, cut: int, *, durable: bool) -> bool:
    """Move ``chat[0:cut]`` to the archive (``cut`` must be a line start). Caller holds the
    lock, has published a pending receipt, and chat/archive end with a newline. False when
    the rotation could not be done and was undone (see the module docstring)."""
    if cut <= 0:
        return True
    try:
        st = os.stat(paths(layout).chat)
        whole = read_range(paths(layout).chat, 0, st.st_size)
    except (OSError, FileError):
        return False  # nothing changed yet
    head, tail = whole[:cut], whole[cut:]
    archive_before = file_size(paths(layout).archive) or 0
    marker = Marker(
        op="rotate",
        ino=st.st_ino,
        cut=cut,
        temp=ROTATE_TEMP,
        before=expect_of(whole),
        archive=expect_of(head, start=archive_before),
        final=expect_of(tail),
    )
    try:
        write_marker(layout, marker, durable=durable)
    except OSError:
        return False  # nothing changed yet
    try:
        _move(layout, marker, head, tail, durable=durable)
    except (OSError, FileError):
        _undo(layout, marker, durable=durable)
        return False
    return True


def _undo(layout: Layout, m: Marker, *, durable: bool) -> None:
    """Roll a failed rotation back. Chat's replacement is written to a temp file first, so
    unless the rename already happened (then the rotation is complete and only the marker
    goes), chat is untouched and the archive is cut back to its old size. Best effort: if a
    step fails, the marker stays and recovery finishes or redoes the rotation later, as
    after a crash."""
    assert m.archive is not None
    assert m.final is not None
    try:
        if not m.final.holds(paths(layout).chat):
            fd = open_regular(paths(layout).archive, os.O_WRONLY)
            if fd is not None:
                try:
                    os.ftruncate(fd, m.archive.start)
                    if durable:
                        os.fsync(fd)
                finally:
                    os.close(fd)
            _drop_temp(layout)
        remove_marker(layout, durable=durable)
    except (OSError, FileError):
        return


def _move(layout: Layout, m: Marker, head: bytes, tail: bytes, *, durable: bool) -> None:
    assert m.archive is not None
    fd = open_regular(paths(layout).archive, os.O_WRONLY | os.O_CREAT)
    assert fd is not None
    try:
        os.ftruncate(fd, m.archive.start)
        os.lseek(fd, m.archive.start, os.SEEK_SET)
        write_all(fd, head)
        if durable:
            os.fsync(fd)
    finally:
        os.close(fd)
    atomic_write(paths(layout).chat, tail, durable=durable, temp_name=ROTATE_TEMP)
    remove_marker(layout, durable=durable)


def finish_rotation(layout: Layout, m: Marker, report: RecoveryReport, *, durable: bool) -> None:
    """Complete an interrupted rotation from its marker (deterministic, idempotent)."""
    assert m.before is not None
    assert m.archive is not None
    assert m.final is not None
    assert m.cut is not None
    if m.final.holds(paths(layout).chat):
        if not m.archive.holds(paths(layout).archive):
            report.problems.append(
                "interrupted rotation: chat was replaced but the archive does not hold the "
                "moved rows as recorded; files left as found"
            )
        else:
            report.actions.append("completed an interrupted rotation (marker removed)")
        _drop_temp(layout)
        remove_marker(layout, durable=durable)
        return
    p = paths(layout)
    if m.before.holds(p.chat) and (file_size(p.archive) or 0) >= m.archive.start:
        whole = read_range(paths(layout).chat, 0, m.before.size)
        _move(layout, m, whole[: m.cut], whole[m.cut :], durable=durable)
        report.actions.append("redid an interrupted rotation from its marker")
        return
    report.problems.append(
        "interrupted rotation: the files changed since it started; left as found"
    )
    _drop_temp(layout)
    remove_marker(layout, durable=durable)


def _drop_temp(layout: Layout) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(paths(layout).session_dir / ROTATE_TEMP)
