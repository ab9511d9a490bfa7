"""Append receipts (R29): ``history-append-provenance.json``.

A receipt says which transcript the store last vouched for. Before any change to the
transcript files a writer publishes a ``pending`` receipt (failing to do so aborts the
change); afterwards it publishes ``stable``. A verified append (the file grew by exactly the
bytes written and is still the same inode) keeps the epoch; every other mutation gets a new
one. A stable receipt binds the epoch to both files' stamps, so a cursor minted under it is
valid only while the receipt is stable and the stamps are unchanged.

On disk (version ``segue-receipt-1``) the receipt is one JSON object padded with spaces to
exactly ``RECORD_SIZE`` bytes, last byte a newline::

    {"version":"segue-receipt-1","state":"stable","epoch":"<32 hex>","nextSequence":42,
     "chat":{"dev":..,"ino":..,"size":..,"mtimeNs":..,"ctimeNs":..}|null,
     "archive":{...}|null,
     "append":null|{"dev":..,"ino":..,"from":N,"to":M,"sha256":"<hex of chat[N:M]>"},
     "check":"<first 32 hex of sha256 over the object serialized without 'check'>"}

``append`` is the journal of the batch in flight (pending receipts of appends only): where
it starts, where it must end and the digest of its bytes. ``nextSequence`` is a floor for
the next ``historySequence`` so a hard clear never lets a sequence be reused.

Why a fixed size and a check: a hot-path update overwrites the record in place with a single
``pwrite`` of one page at offset 0 (a process killed mid-call never leaves half a page), then
``fdatasync``. That costs one cheap sync instead of the three of a temp-file rename, which
is what keeps a durable append near the cost of a bare ``write`` + ``fsync``. A reader that
races the overwrite, or a record torn by power loss, fails the check and is treated as
untrusted, which only expires cursors. Anything that is not a plain regular file with one
link and the exact record size (a symlink, a FIFO, a hard link, an oversized or foreign
file) is never written through: it is replaced atomically (temp file, fsync, ``os.replace``,
directory fsync). Readers refuse symlinks, non-regular files and files over 4 KiB.
"""

from __future__ import annotations

import errno
import hashlib
import os
import secrets
import stat
from dataclasses import dataclass
from typing import Any, Literal

import msgspec

from segue.errors import ReceiptError
from segue.fsutil import atomic_write
from segue.history.paths import paths
from segue.workspace import Layout

RECEIPT_VERSION = "segue-receipt-1"
RECORD_SIZE = 1024
MAX_RECEIPT_BYTES = 4096

ReceiptState = Literal["pending", "stable"]


@dataclass(frozen=True)
class FileStamp:
    dev: int
    ino: int
    size: int
    mtime_ns: int
    ctime_ns: int


@dataclass(frozen=True)
class AppendJournal:
    """The batch in flight: ``chat[start:end]`` on file (dev, ino) must hash to ``sha256``."""

    dev: int
    ino: int
    start: int
    end: int
    sha256: str


@dataclass(frozen=True)
class Receipt:
    state: ReceiptState
    epoch: str
    chat: FileStamp | None
    archive: FileStamp | None
    next_sequence: int = 0
    append: AppendJournal | None = None


def new_epoch() -> str:
    return secrets.token_hex(16)


def stamp_of(st: os.stat_result) -> FileStamp:
    return FileStamp(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _stamp(path: os.PathLike[str]) -> FileStamp | None:
    try:
        return stamp_of(os.stat(path))
    except FileNotFoundError:
        return None


def current_stamps(layout: Layout) -> tuple[FileStamp | None, FileStamp | None]:
    """(chat, archive) stamps now; None for a file that does not exist."""
    return _stamp(paths(layout).chat), _stamp(paths(layout).archive)


def receipt_matches(receipt: Receipt | None, layout: Layout) -> bool:
    """True when the receipt is stable and both files are exactly as it recorded them."""
    if receipt is None or receipt.state != "stable":
        return False
    return (receipt.chat, receipt.archive) == current_stamps(layout)


# -- encoding ----------------------------------------------------------------------------


def _stamp_obj(s: FileStamp | None) -> dict[str, int] | None:
    if s is None:
        return None
    return {
        "dev": s.dev, "ino": s.ino, "size": s.size, "mtimeNs": s.mtime_ns, "ctimeNs": s.ctime_ns
    }


def _check(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()[:32]


def encode_receipt(r: Receipt) -> bytes:
    journal = None
    if r.append is not None:
        a = r.append
        journal = {"dev": a.dev, "ino": a.ino, "from": a.start, "to": a.end, "sha256": a.sha256}
    obj: dict[str, Any] = {
        "version": RECEIPT_VERSION,
        "state": r.state,
        "epoch": r.epoch,
        "nextSequence": r.next_sequence,
        "chat": _stamp_obj(r.chat),
        "archive": _stamp_obj(r.archive),
        "append": journal,
    }
    body = msgspec.json.encode(obj)
    record = body[:-1] + b',"check":"' + _check(body).encode() + b'"}'
    if len(record) > RECORD_SIZE - 1:
        raise ReceiptError(f"receipt record too large ({len(record)} bytes)")
    return record + b" " * (RECORD_SIZE - 1 - len(record)) + b"\n"


def _nat(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError("not a non-negative integer")
    return value


def _stamp_from(obj: Any) -> FileStamp | None:
    if obj is None:
        return None
    return FileStamp(
        _nat(obj["dev"]), _nat(obj["ino"]), _nat(obj["size"]),
        _nat(obj["mtimeNs"]), _nat(obj["ctimeNs"]),
    )


def decode_receipt(data: bytes) -> Receipt | None:
    """The receipt in ``data``, or None when it is malformed in any way."""
    if len(data) > MAX_RECEIPT_BYTES:
        return None
    try:
        obj = msgspec.json.decode(data)
        if not isinstance(obj, dict):
            return None
        check = obj.pop("check", None)
        if not isinstance(check, str) or check != _check(msgspec.json.encode(obj)):
            return None
        if obj.get("version") != RECEIPT_VERSION or obj.get("state") not in ("pending", "stable"):
            return None
        epoch = obj.get("epoch")
        if not isinstance(epoch, str) or not epoch:
            return None
        journal = None
        j = obj.get("append")
        if j is not None:
            if not isinstance(j, dict) or not isinstance(j.get("sha256"), str):
                return None
            journal = AppendJournal(
                _nat(j["dev"]), _nat(j["ino"]), _nat(j["from"]), _nat(j["to"]), j["sha256"]
            )
            if journal.end < journal.start:
                return None
        return Receipt(
            state=obj["state"],
            epoch=epoch,
            chat=_stamp_from(obj.get("chat")),
            archive=_stamp_from(obj.get("archive")),
            next_sequence=_nat(obj.get("nextSequence", 0)),
            append=journal,
        )
    except (msgspec.DecodeError, KeyError, TypeError, ValueError):
        return None


# -- I/O -----------------------------------------------------------------------------------


def read_receipt(layout: Layout) -> Receipt | None:
    """None when missing, malformed, oversized (> 4 KiB), a symlink or not a regular file."""
    try:
        fd = os.open(paths(layout).receipt, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ELOOP, errno.ENOTDIR, errno.EISDIR, errno.ENXIO):
            return None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_RECEIPT_BYTES:
            return None
        data = os.pread(fd, MAX_RECEIPT_BYTES + 1, 0)
    finally:
        os.close(fd)
    return decode_receipt(data)


def write_receipt(layout: Layout, receipt: Receipt, *, durable: bool = True) -> None:
    """Publish ``receipt``; raises ReceiptError when it cannot be written."""
    record = encode_receipt(receipt)
    path = paths(layout).receipt
    try:
        if _write_in_place(path, record, durable=durable):
            return
        atomic_write(path, record, durable=durable)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ReceiptError(f"cannot write receipt {path}: {reason}", path=path) from exc


def _write_in_place(path: os.PathLike[str], record: bytes, *, durable: bool) -> bool:
    try:
        fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ELOOP, errno.ENXIO, errno.EISDIR, errno.EACCES):
            return False
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1 or st.st_size != len(record):
            return False
        if os.pwrite(fd, record, 0) != len(record):
            return False  # fall back to the rename path, which rewrites the whole record
        if durable:
            os.fdatasync(fd)
        return True
    finally:
        os.close(fd)
