"""What a page knows about the files it reads: the receipt and both stamps (R29, R30).

A **trusted** snapshot has a stable receipt whose stamps equal the files now. Only a trusted
snapshot can vouch that later growth of ``chat.jsonl`` was a verified append.

Continuation rule (:func:`continuation_ok`), the whole of "stale":

* cursor minted under a trusted snapshot: now trusted, same epoch, archive stamp identical,
  chat the same file (device, inode) and not smaller. Anything else — rotation (archive
  changed), truncation or rewrite (new epoch or smaller chat), an untracked append or a
  deleted/corrupt/pending receipt (not trusted) — is stale.
* cursor minted under an untrusted snapshot (no receipt, a pending one, a mismatch): both
  stamps must be exactly as they were. Nobody vouched for growth, so none is accepted.
"""

from __future__ import annotations

from dataclasses import dataclass

from segue._fsutil import check_regular
from segue._history.paths import paths
from segue._history.receipt import FileStamp, current_stamps, read_receipt
from segue._history.visibility import visible_bounds
from segue._workspace import Layout


@dataclass(frozen=True)
class Snapshot:
    trusted: bool
    epoch: str  # "" when not trusted
    chat: FileStamp | None
    archive: FileStamp | None
    #: readable bytes: the files' sizes, or less under an untrusted receipt where the store's
    #: visibility rule hides a batch or rotation in flight (segue._history.visibility)
    archive_size: int = 0
    chat_size: int = 0


def take(layout: Layout) -> Snapshot:
    # A FIFO, device or link at a transcript path stats as some other file (or as empty):
    # reading around it could miss a floor in it (R11), so it is refused, naming the path.
    for path in (paths(layout).chat, paths(layout).archive):
        check_regular(path, "read")
    receipt = read_receipt(layout)
    chat, archive = current_stamps(layout)
    # ``ours``: a receipt Xum republished after its own append vouches for nothing segue
    # verified, so growth under it is an untracked change (R26).
    trusted = (
        receipt is not None
        and receipt.ours
        and receipt.state == "stable"
        and receipt.chat == chat
        and receipt.archive == archive
    )
    if receipt is not None and trusted:
        return Snapshot(
            True,
            receipt.epoch,
            chat,
            archive,
            archive.size if archive is not None else 0,
            chat.size if chat is not None else 0,
        )
    bounds = visible_bounds(layout)
    return Snapshot(False, "", chat, archive, bounds.archive_end, bounds.chat_end)


def continuation_ok(then: Snapshot, now: Snapshot) -> bool:
    if not then.trusted:
        return now == then
    if not now.trusted or now.epoch != then.epoch or not _same_bytes(now.archive, then.archive):
        return False
    if then.chat is None:
        return True
    return (
        now.chat is not None
        and (now.chat.dev, now.chat.ino) == (then.chat.dev, then.chat.ino)
        and now.chat.size >= then.chat.size
    )


def _same_bytes(a: FileStamp | None, b: FileStamp | None) -> bool:
    """The same file with the same bytes: everything but the ctime, which a mode change alone
    moves (segue tightens a wide file's mode and republishes its receipt in the same epoch,
    R38; ``now`` is trusted only when that receipt records the ctime the file has now)."""
    if a is None or b is None:
        return a is b
    return (a.dev, a.ino, a.size, a.mtime_ns) == (b.dev, b.ino, b.size, b.mtime_ns)
