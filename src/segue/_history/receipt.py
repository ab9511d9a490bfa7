"""Append receipts (R29): ``history-append-provenance.json``, in Xum's format.

A receipt says which transcript the last writer vouched for. Before any change to the
transcript files a writer publishes a ``pending`` receipt (failing to do so aborts the
change); afterwards it publishes ``stable``. A verified append (the file grew by exactly the
bytes written and is still the same inode) keeps the epoch; every other mutation gets a new
one. A stable receipt binds the epoch to both files' stamps.

On disk it is exactly what Xum writes and validates (SPEC.md §3 "The receipt"), so each tool
honours the other's::

    {"version":1,"epoch":"<UUID>","state":"pending"|"stable",
     "files":{"chat":STAMP|null,"archive":STAMP|null}}
    STAMP = {"dev":"..","ino":"..","size":"..","mtimeNs":"..","ctimeNs":".."}  (decimal strings)

with no other keys: a file with any other key, a missing or mistyped one, over 4 KiB, a
symlink or not a regular file is malformed (it expires cursors, nothing more).

segue writes the compact object followed by spaces up to ``RECORD_SIZE`` bytes and a newline
(JSON whitespace, so Xum reads it as it is). The fixed size lets the hot path overwrite it
in place with one ``pwrite`` instead of a rename, whose directory update costs as much as
the append's own fsync. A receipt of another size (one Xum wrote) is replaced by rename.
A reader that races an overwrite may see a mix, which matches no sidecar mirror and so
only expires cursors.

What segue needs beyond it (the append journal, the sequence floor, and whether the receipt
is still the one segue published) is in its sidecar (:mod:`segue._history.sidecar`), written
under the same lock right after the receipt. :func:`read_receipt` merges the two: the result
is ``ours`` only while the sidecar mirrors the receipt exactly. Only ``ours`` receipts carry
a journal and vouch for the files (:func:`receipt_matches`): a receipt Xum wrote, even after
a plain append, makes the change an untracked one.
"""

from __future__ import annotations

import dataclasses
import os
import re
import uuid
from dataclasses import dataclass
from typing import Any, Literal

import msgspec

from segue._errors import ReceiptError
from segue._fsutil import file_error
from segue._history.paths import paths
from segue._history.sidecar import (
    AppendJournal,
    FileStamp,
    Sidecar,
    read_record,
    read_sidecar,
    write_record,
    write_sidecar,
)
from segue._workspace import Layout

__all__ = [
    "MAX_RECEIPT_BYTES",
    "RECEIPT_VERSION",
    "AppendJournal",
    "FileStamp",
    "Receipt",
    "current_stamps",
    "decode_receipt",
    "encode_receipt",
    "new_epoch",
    "read_receipt",
    "receipt_matches",
    "stamp_of",
    "write_receipt",
]

RECEIPT_VERSION = 1
MAX_RECEIPT_BYTES = 4096
RECORD_SIZE = 1024

ReceiptState = Literal["pending", "stable"]

_DECIMAL = re.compile(r"0|[1-9][0-9]{0,30}")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_STAMP_KEYS = ("dev", "ino", "size", "mtimeNs", "ctimeNs")


@dataclass(frozen=True)
class Receipt:
    state: ReceiptState
    epoch: str
    chat: FileStamp | None
    archive: FileStamp | None
    #: from the sidecar: a floor for the next ``historySequence`` (honoured in any epoch)
    next_sequence: int = 0
    #: from the sidecar: the batch in flight, only on a pending receipt that is ``ours``
    append: AppendJournal | None = None
    #: the sidecar mirrors this receipt: segue published it and nobody replaced it since
    ours: bool = True


def new_epoch() -> str:
    return str(uuid.uuid4())


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
    """True when the receipt is segue's own, stable, and both files are exactly as it
    recorded them."""
    if receipt is None or receipt.state != "stable" or not receipt.ours:
        return False
    return (receipt.chat, receipt.archive) == current_stamps(layout)


# -- encoding ----------------------------------------------------------------------------


def _stamp_obj(s: FileStamp | None) -> dict[str, str] | None:
    if s is None:
        return None
    values = (s.dev, s.ino, s.size, s.mtime_ns, s.ctime_ns)
    return {key: str(value) for key, value in zip(_STAMP_KEYS, values, strict=True)}


def encode_receipt(r: Receipt) -> bytes:
    """Xum's receipt bytes for ``r`` (the sidecar's fields are not part of it)."""
    obj: dict[str, Any] = {
        "version": RECEIPT_VERSION,
        "epoch": r.epoch,
        "state": r.state,
        "files": {"chat": _stamp_obj(r.chat), "archive": _stamp_obj(r.archive)},
    }
    body = msgspec.json.encode(obj)
    if len(body) > RECORD_SIZE - 1:
        raise ReceiptError(f"receipt too large ({len(body)} bytes)")
    return body + b" " * (RECORD_SIZE - 1 - len(body)) + b"\n"


def _decimal(value: Any) -> int:
    if not isinstance(value, str) or not _DECIMAL.fullmatch(value):
        raise ValueError("not a decimal string")
    return int(value)


def _stamp_from(obj: Any) -> FileStamp | None:
    if obj is None:
        return None
    if not isinstance(obj, dict) or set(obj) != set(_STAMP_KEYS):
        raise ValueError("bad stamp")
    dev, ino, size, mtime, ctime = (_decimal(obj[key]) for key in _STAMP_KEYS)
    return FileStamp(dev, ino, size, mtime, ctime)


def decode_receipt(data: bytes) -> Receipt | None:
    """The receipt in ``data`` (not yet merged with a sidecar: ``ours`` is False), or None
    when it is malformed in any way."""
    if len(data) > MAX_RECEIPT_BYTES:
        return None
    try:
        obj = msgspec.json.decode(data)
        if not isinstance(obj, dict) or set(obj) != {"version", "epoch", "state", "files"}:
            return None
        version = obj["version"]
        if version != RECEIPT_VERSION or type(version) is not int:
            return None
        state, epoch, files = obj["state"], obj["epoch"], obj["files"]
        if state not in ("pending", "stable"):
            return None
        if not isinstance(epoch, str) or not _UUID.fullmatch(epoch):
            return None
        if not isinstance(files, dict) or set(files) != {"chat", "archive"}:
            return None
        return Receipt(
            state=state,
            epoch=epoch,
            chat=_stamp_from(files["chat"]),
            archive=_stamp_from(files["archive"]),
            ours=False,
        )
    except (msgspec.DecodeError, RecursionError, KeyError, TypeError, ValueError):
        return None


def _finalizes(receipt: Receipt, sidecar: Sidecar) -> bool:
    """The stable receipt that closes the append the pending sidecar journaled: same epoch,
    archive unchanged, chat the journaled file at exactly the journaled end. (The hot path
    publishes it without rewriting the sidecar; an append by anyone else changes the size.)"""
    j = sidecar.append
    if j is None or sidecar.state != "pending" or receipt.state != "stable":
        return False
    chat = receipt.chat
    return (
        receipt.epoch == sidecar.epoch
        and receipt.archive == sidecar.archive
        and chat is not None
        and (chat.dev, chat.ino, chat.size) == (j.dev, j.ino, j.end)
    )


def _merge(receipt: Receipt, sidecar: Sidecar | None) -> Receipt:
    if sidecar is None:
        return receipt
    mirror = (sidecar.state, sidecar.epoch, sidecar.chat, sidecar.archive) == (
        receipt.state, receipt.epoch, receipt.chat, receipt.archive,
    )
    ours = mirror or _finalizes(receipt, sidecar)
    return Receipt(
        state=receipt.state,
        epoch=receipt.epoch,
        chat=receipt.chat,
        archive=receipt.archive,
        next_sequence=sidecar.next_sequence,
        append=sidecar.append if mirror and receipt.state == "pending" else None,
        ours=ours,
    )


# -- I/O -----------------------------------------------------------------------------------


def read_receipt(layout: Layout) -> Receipt | None:
    """The receipt merged with segue's sidecar; None when the receipt is missing, malformed,
    oversized (> 4 KiB), a symlink or not a regular file."""
    data = read_record(paths(layout).receipt, max_size=MAX_RECEIPT_BYTES)
    if data is None:
        return None
    written = _written.get(str(paths(layout).receipt))
    if written is not None and written[0] == data:
        return written[1]
    receipt = decode_receipt(data)
    return None if receipt is None else _merge(receipt, read_sidecar(layout))


#: The receipt bytes this process last published per path, with their sidecar already
#: written: while the file still holds exactly those bytes the sidecar need not be read again
#: (the append hot path). Any other writer's receipt differs in its bytes (stamps carry
#: nanosecond times), and every sidecar write follows a receipt write.
_written: dict[str, tuple[bytes, Receipt]] = {}


def sequence_floor(layout: Layout) -> int:
    """The sidecar's sequence floor, whatever the receipt says (0 without a sidecar)."""
    sidecar = read_sidecar(layout)
    return sidecar.next_sequence if sidecar is not None else 0


def write_receipt(
    layout: Layout, receipt: Receipt, *, durable: bool = True, sidecar: bool = True
) -> None:
    """Publish ``receipt`` (Xum's file) and then its sidecar (journal, floor, mirror).
    Raises ReceiptError when either cannot be written; a receipt without its sidecar is not
    ``ours``, so a failure half way only expires cursors. ``sidecar=False`` is for the
    stable receipt that closes a journaled append (see :func:`_finalizes`)."""
    path = paths(layout).receipt
    record = encode_receipt(receipt)
    _written.pop(str(path), None)
    try:
        write_record(path, record, durable=durable)
    except OSError as exc:
        message = file_error(exc, path, "write the receipt").message
        raise ReceiptError(message, path=path) from exc
    journal = receipt.append if receipt.state == "pending" else None
    merged = dataclasses.replace(receipt, append=journal, ours=True)
    if not sidecar:
        _written[str(path)] = (record, merged)
        return
    write_sidecar(
        layout,
        Sidecar(
            receipt.state,
            receipt.epoch,
            receipt.chat,
            receipt.archive,
            receipt.next_sequence,
            receipt.append,
        ),
        durable=durable,
    )
    _written[str(path)] = (record, merged)
