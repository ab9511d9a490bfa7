"""Quarantine (R22): a rejected input becomes transcript-only.

The row keeps its id, ``historySequence``, ``timestamp`` and workspace; it becomes an empty,
non-partial assistant row with ``metadata.contextBudgetRejected: true`` and the original
(role, parts, metadata and any unknown top-level fields) inside
``metadata.contextBudgetRejectedMessage``. No other metadata of the original stays on the
outer row, so none of its control fields (boundary kinds, compaction flags, mux types) stays
active. Request assembly skips empty assistant rows; display and export recover the original.

The on-disk change is a whole-file rewrite of the file holding the row, as a transaction
(R34): the replacement is built in a temp file, a ``rewrite`` marker records digests of the
file before and after, then ``os.replace``.

That rewrite gives the transcript a new epoch (R29), which untrusts the history index. So the
store also records what it changed, under the lock, in ``history-index.rewrites.json``
(:func:`record_rewrite`): the epoch the files had (only when a stable receipt vouched for
them), the new epoch, which file (device, inode before and after), and the line's offset,
old and new lengths and digests. Every other byte is the old file's, copied verbatim. The
index uses it to re-derive that row instead of rebuilding (SPEC.md §7 "Freshness",
:mod:`segue._retrieval.index_rewrites`). The note is a hint, never a truth: a lost or garbled
note costs a rebuild; a note that does not chain from the index's epoch to the receipt's, or
whose line does not check, is not used.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import asdict, dataclass
from typing import Any

from segue._fsutil import fsync_dir, write_all
from segue._history.marker import Expect, Marker, remove_marker, write_marker
from segue._history.paths import paths
from segue._history.scan import Source, StoredLine
from segue._messages import Row, encode_row, row_to_obj
from segue._workspace import Layout

REWRITE_TEMP = ".history-rewrite.tmp"
#: the one-line rewrites recorded for the history index (newest last)
REWRITES_NAME = "history-index.rewrites.json"
#: rewrites kept: a chain of quarantines between two look-backs is re-derived as one
MAX_REWRITES = 8
_MAX_NOTE_BYTES = 16 << 10
_KEEP_OUTER = ("historySequence", "timestamp")
_CHUNK = 1 << 20


#: Outer metadata of a row quarantined because the model failed to answer it (a failed
#: send): the failure's message. Without it, the row was rejected by the size guards (R16).
SEND_FAILURE_KEY = "sendFailure"


def quarantined(row: Row, *, send_failure: str | None = None) -> Row:
    """The quarantined form of ``row``; a row already quarantined is returned unchanged.
    ``send_failure`` records why a sent message got no answer (it stays on disk, shown as
    not sent, and is never replayed to a model)."""
    if row.flag("contextBudgetRejected") and row.role == "assistant" and not row.parts:
        return row
    original: dict[str, Any] = row_to_obj(row)
    original.pop("workspaceId", None)
    inner_meta = {k: v for k, v in row.metadata.items() if k != "historySequence"}
    original["metadata"] = inner_meta
    meta: dict[str, Any] = {k: row.metadata[k] for k in _KEEP_OUTER if k in row.metadata}
    meta["synthetic"] = True
    meta["uiVisible"] = False
    meta["contextBudgetRejected"] = True
    meta["contextBudgetRejectedMessage"] = original
    if send_failure is not None:
        meta[SEND_FAILURE_KEY] = send_failure
    return Row(id=row.id, role="assistant", parts=(), metadata=meta, workspaceId=row.workspaceId)


@dataclass(frozen=True)
class LineRewrite:
    """One line of one transcript file replaced, every other byte kept (see the module)."""

    source: str  # "chat" | "archive"
    file_before: tuple[int, int]  # (device, inode) of the file rewritten
    file_after: tuple[int, int]  # ... and of its replacement
    size_after: int
    offset: int  # the line's offset in the file
    old_len: int  # bytes, newline included
    new_len: int
    old_digest: str  # blake2b-128 (hex) of the line without its newline, as the index keeps
    new_digest: str
    before: str | None = None  # the epoch a stable receipt gave the files before (None: none)
    after: str = ""  # the rewrite's epoch


def line_digest(raw: bytes) -> str:
    return hashlib.blake2b(raw, digest_size=16).hexdigest()


def rewrite_line(
    layout: Layout, source: Source, line: StoredLine, new_raw: bytes, *, durable: bool
) -> LineRewrite:
    """Replace one line of ``source`` with ``new_raw`` (no newline) as a marked rewrite.
    Caller holds the lock and has published a pending receipt. Returns what changed."""
    path = paths(layout).archive if source == "archive" else paths(layout).chat
    temp = paths(layout).session_dir / REWRITE_TEMP
    before = hashlib.sha256()
    after = hashlib.sha256()
    st = os.stat(path)
    with open(path, "rb") as src:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        try:
            _copy(src, fd, 0, line.offset, before, after)
            old = src.read(line.length)
            before.update(old)
            old_digest = line_digest(old[:-1] if old.endswith(b"\n") else old)
            replacement = new_raw + b"\n"
            after.update(replacement)
            write_all(fd, replacement)
            _copy(src, fd, line.end, st.st_size, before, after)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
    final_size = st.st_size - line.length + len(new_raw) + 1
    marker = Marker(
        op="rewrite",
        target=source,
        ino=st.st_ino,
        temp=REWRITE_TEMP,
        before=Expect(st.st_size, 0, before.hexdigest()),
        final=Expect(final_size, 0, after.hexdigest()),
    )
    write_marker(layout, marker, durable=durable)
    os.replace(temp, path)
    if durable:
        fsync_dir(paths(layout).session_dir)
    remove_marker(layout, durable=durable)
    now = os.stat(path)
    return LineRewrite(
        source=source,
        file_before=(st.st_dev, st.st_ino),
        file_after=(now.st_dev, now.st_ino),
        size_after=final_size,
        offset=line.offset,
        old_len=line.length,
        new_len=len(new_raw) + 1,
        old_digest=old_digest,
        new_digest=line_digest(new_raw),
    )


def record_rewrite(layout: Layout, done: LineRewrite, *, before: str | None, after: str) -> None:
    """Record ``done`` (the caller holds the lock) as the rewrite from epoch ``before`` to
    ``after``, after the rewrites it continues; ``before=None`` (no stable receipt vouched for
    the files) clears the record, as nothing can chain through it. Never fails the rewrite:
    an unrecorded rewrite only costs the index a rebuild."""
    note = LineRewrite(**{**asdict(done), "before": before, "after": after})
    notes = [] if before is None else read_rewrites(layout)
    if notes and notes[-1].after != before:
        notes = []
    notes = [*notes, note][-MAX_REWRITES:] if before is not None else []
    path = paths(layout).session_dir / REWRITES_NAME
    temp = path.with_name(path.name + ".tmp")
    data = json.dumps([asdict(n) for n in notes], separators=(",", ":")).encode()
    with contextlib.suppress(OSError):
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        try:
            write_all(fd, data)
        finally:
            os.close(fd)
        os.replace(temp, path)


def read_rewrites(layout: Layout) -> list[LineRewrite]:
    """The recorded rewrites, oldest first; [] when there are none or the record is not one
    this code wrote (it is a hint: see the module)."""
    path = paths(layout).session_dir / REWRITES_NAME
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return []
    try:
        data = os.read(fd, _MAX_NOTE_BYTES + 1)
    except OSError:
        return []
    finally:
        os.close(fd)
    try:
        raw = json.loads(data) if len(data) <= _MAX_NOTE_BYTES else None
        if not isinstance(raw, list):
            return []
        return [_note(obj) for obj in raw]
    except (ValueError, TypeError, KeyError):
        return []


def _note(obj: Any) -> LineRewrite:
    if not isinstance(obj, dict):
        raise TypeError("not an object")
    ints = ("size_after", "offset", "old_len", "new_len")
    pairs = ("file_before", "file_after")
    strs = ("old_digest", "new_digest", "after")
    if not all(type(obj[k]) is int and obj[k] >= 0 for k in ints):
        raise TypeError("not a length")
    if not all(isinstance(obj[k], list) and len(obj[k]) == 2 for k in pairs):
        raise TypeError("not a file")
    if not all(isinstance(obj[k], str) for k in strs) or obj["source"] not in ("chat", "archive"):
        raise TypeError("not a name")
    if obj["before"] is not None and not isinstance(obj["before"], str):
        raise TypeError("not an epoch")
    return LineRewrite(
        source=obj["source"],
        file_before=(int(obj["file_before"][0]), int(obj["file_before"][1])),
        file_after=(int(obj["file_after"][0]), int(obj["file_after"][1])),
        **{k: obj[k] for k in (*ints, *strs, "before")},
    )


def _copy(src: Any, fd: int, start: int, stop: int, *digests: Any) -> None:
    src.seek(start)
    left = stop - start
    while left > 0:
        buf = src.read(min(_CHUNK, left))
        if not buf:
            raise OSError("file shrank during a rewrite")
        for d in digests:
            d.update(buf)
        write_all(fd, buf)
        left -= len(buf)


def encode_quarantined(row: Row) -> bytes:
    return encode_row(quarantined(row))
