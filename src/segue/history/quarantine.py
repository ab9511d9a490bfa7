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
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

from segue.fsutil import fsync_dir, write_all
from segue.history.marker import Expect, Marker, remove_marker, write_marker
from segue.history.paths import paths
from segue.history.scan import Source, StoredLine
from segue.messages import Row, encode_row, row_to_obj
from segue.workspace import Layout

REWRITE_TEMP = ".history-rewrite.tmp"
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


def rewrite_line(
    layout: Layout, source: Source, line: StoredLine, new_raw: bytes, *, durable: bool
) -> None:
    """Replace one line of ``source`` with ``new_raw`` (no newline) as a marked rewrite.
    Caller holds the lock and has published a pending receipt."""
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
