"""segue's own append record, next to Xum's receipt (R28, R29, SPEC.md §3 "The receipt").

Xum's receipt (``history-append-provenance.json``) has exactly the keys Xum writes, so what
segue needs beyond it lives here, in ``history-append-journal.json``, written under the same
lock right after each receipt:

* the **mirror** of the receipt segue last published (epoch, state, both stamps): the receipt
  is segue's own only while it equals the mirror. A receipt Xum republished after its own
  append (same epoch, new stamps) no longer does, so that append counts as an untracked
  change: cursors expire and the next locked operation starts a new epoch;
* the **append journal** of the batch in flight (pending receipts of appends only): where it
  starts in ``chat.jsonl``, where it must end and the digest of its bytes;
* the **sequence floor** ``nextSequence``: the next ``historySequence`` is never below it, so
  a hard clear (even one interrupted between its unlinks) never lets a sequence be reused.
  The floor is honoured whatever epoch it was written under: a stale floor is only too high.

On disk (version ``segue-sidecar-1``) one JSON object padded with spaces to exactly
``RECORD_SIZE`` bytes, last byte a newline, with ``check`` (the first 32 hex of the sha256
of the object serialized without it)::

    {"version":"segue-sidecar-1","state":"stable","epoch":"<uuid>","nextSequence":42,
     "chat":{"dev":..,"ino":..,"size":..,"mtimeNs":..,"ctimeNs":..}|null,"archive":...|null,
     "append":null|{"dev":..,"ino":..,"from":N,"to":M,"sha256":"<hex of chat[N:M]>"},
     "check":"..."}

Why a fixed size and a check: the hot path overwrites the record in place with one
``pwrite`` at offset 0 (a process killed mid-call never leaves half a page), which is what
keeps a durable append near the cost of a bare ``write`` + ``fsync``. A reader racing the
overwrite, or a record torn by power loss, fails the check and is treated as absent, which
only expires cursors. Anything that is not a plain regular file with one link and the exact
record size (a symlink, a FIFO, a hard link, a foreign file) is never written through: it is
replaced atomically. Readers refuse symlinks, non-regular files and files over 4 KiB.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import msgspec

from segue._errors import ReceiptError
from segue._fsutil import atomic_write
from segue._workspace import Layout

SIDECAR_NAME = "history-append-journal.json"
SIDECAR_VERSION = "segue-sidecar-1"
RECORD_SIZE = 1024
MAX_SIDECAR_BYTES = 4096

State = Literal["pending", "stable"]


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
class Sidecar:
    state: State
    epoch: str
    chat: FileStamp | None
    archive: FileStamp | None
    next_sequence: int = 0
    append: AppendJournal | None = None


def sidecar_path(layout: Layout) -> Path:
    return layout.session_dir / SIDECAR_NAME


def _stamp_obj(s: FileStamp | None) -> dict[str, int] | None:
    if s is None:
        return None
    return {
        "dev": s.dev, "ino": s.ino, "size": s.size, "mtimeNs": s.mtime_ns, "ctimeNs": s.ctime_ns
    }


def _check(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()[:32]


def encode_sidecar(s: Sidecar) -> bytes:
    journal = None
    if s.append is not None:
        a = s.append
        journal = {"dev": a.dev, "ino": a.ino, "from": a.start, "to": a.end, "sha256": a.sha256}
    obj: dict[str, Any] = {
        "version": SIDECAR_VERSION,
        "state": s.state,
        "epoch": s.epoch,
        "nextSequence": s.next_sequence,
        "chat": _stamp_obj(s.chat),
        "archive": _stamp_obj(s.archive),
        "append": journal,
    }
    body = msgspec.json.encode(obj)
    record = body[:-1] + b',"check":"' + _check(body).encode() + b'"}'
    if len(record) > RECORD_SIZE - 1:
        raise ReceiptError(f"append journal record too large ({len(record)} bytes)")
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


def decode_sidecar(data: bytes) -> Sidecar | None:
    """The record in ``data``, or None when it is malformed in any way."""
    if len(data) > MAX_SIDECAR_BYTES:
        return None
    try:
        obj = msgspec.json.decode(data)
        if not isinstance(obj, dict):
            return None
        check = obj.pop("check", None)
        if not isinstance(check, str) or check != _check(msgspec.json.encode(obj)):
            return None
        if obj.get("version") != SIDECAR_VERSION or obj.get("state") not in ("pending", "stable"):
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
        return Sidecar(
            state=obj["state"],
            epoch=epoch,
            chat=_stamp_from(obj.get("chat")),
            archive=_stamp_from(obj.get("archive")),
            next_sequence=_nat(obj.get("nextSequence", 0)),
            append=journal,
        )
    except (msgspec.DecodeError, KeyError, TypeError, ValueError):
        return None


def read_sidecar(layout: Layout) -> Sidecar | None:
    """None when missing, malformed, oversized (> 4 KiB), a symlink or not a regular file."""
    data = read_record(sidecar_path(layout), max_size=MAX_SIDECAR_BYTES)
    return None if data is None else decode_sidecar(data)


def read_record(path: Path, *, max_size: int) -> bytes | None:
    """A small record file's bytes (at most ``max_size + 1``: a decoder sees one that grew);
    None when it is missing, a symlink, not a regular file or larger than ``max_size``."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ELOOP, errno.ENOTDIR, errno.EISDIR, errno.ENXIO):
            return None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > max_size:
            return None
        return os.pread(fd, max_size + 1, 0)
    finally:
        os.close(fd)


def write_sidecar(layout: Layout, sidecar: Sidecar, *, durable: bool = True) -> None:
    """Publish ``sidecar``; raises ReceiptError when it cannot be written."""
    path = sidecar_path(layout)
    try:
        write_record(path, encode_sidecar(sidecar), durable=durable)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ReceiptError(f"cannot write append journal {path}: {reason}", path=path) from exc


def write_record(path: Path, record: bytes, *, durable: bool) -> None:
    """Overwrite a fixed-size record in place when ``path`` is a plain file of exactly its
    size, else replace it atomically (see the module docstring)."""
    if not _write_in_place(path, record, durable=durable):
        atomic_write(path, record, durable=durable)


def _write_in_place(path: Path, record: bytes, *, durable: bool) -> bool:
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
