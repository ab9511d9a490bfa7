"""What a reader may show: the reader-visibility rule (R28, R30). Read-only, no lock needed.

Only newline-terminated lines are data (the scanners enforce that). On top of that:

* **Batch in flight.** While the receipt is ``pending`` with an append journal (kept in
  segue's sidecar, and only while the sidecar mirrors that receipt) for the current chat
  inode, the journal's batch ``chat[from:to]`` is visible only when all its bytes are there
  with the recorded digest; otherwise chat is visible only up to ``from``. So a batch
  cut short by ``kill -9`` (even one whose first lines landed whole) is never half-visible,
  before or after recovery removes it.
* **Rotation in flight.** While a ``rotate`` marker exists and chat is still the file it
  names (same inode), the archive is visible only up to its size before the rotation, so the
  rows being moved are not seen twice.
* **Clear in flight.** While a ``clear`` marker exists nothing is visible: recovery always
  completes a clear, and what a crash left between its unlinks (the archive without chat)
  may lie below a manual reset that was in chat (R11).

Readers that page take the store lock (R30), so in a live system they never see either
state; the rule is what makes a crashed, not yet recovered, transcript safe to read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from segue._fsutil import sha256_range
from segue._history.marker import MarkerUnreadable, read_marker
from segue._history.paths import paths
from segue._history.receipt import Receipt, read_receipt
from segue._workspace import Layout


@dataclass(frozen=True)
class Bounds:
    """Visible byte ranges: ``archive[0:archive_end]`` ++ ``chat[0:chat_end]`` (the scanners
    then drop a torn tail inside those ranges)."""

    archive_end: int
    chat_end: int
    receipt: Receipt | None


def _stat(path: os.PathLike[str]) -> os.stat_result | None:
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None


def visible_bounds(layout: Layout) -> Bounds:
    receipt = read_receipt(layout)
    chat = _stat(paths(layout).chat)
    archive = _stat(paths(layout).archive)
    chat_end = chat.st_size if chat is not None else 0
    archive_end = archive.st_size if archive is not None else 0
    if chat is not None and receipt is not None and receipt.state == "pending":
        j = receipt.append
        if j is not None and (j.dev, j.ino) == (chat.st_dev, chat.st_ino):
            digest = sha256_range(paths(layout).chat, j.start, j.end)
            whole = chat_end >= j.end and digest == j.sha256
            if not whole:
                chat_end = min(chat_end, j.start)
    try:
        marker = read_marker(layout)
    except MarkerUnreadable:
        marker = None
    if marker is not None and marker.op == "clear":
        return Bounds(archive_end=0, chat_end=0, receipt=receipt)
    if (
        marker is not None
        and marker.op == "rotate"
        and marker.archive is not None
        and chat is not None
        and chat.st_ino == marker.ino
    ):
        archive_end = min(archive_end, marker.archive.start)
    return Bounds(archive_end=archive_end, chat_end=chat_end, receipt=receipt)
