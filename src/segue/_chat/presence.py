"""One chat per workspace: a second ``segue chat`` on a workspace that has one open says which
process holds it and stops, instead of two people (or one person in two terminals) talking to
one transcript, each model reading the other's messages.

The claim is an ``flock`` on ``SEGUE_HOME/locks/chat-<sha256(workspaceId)[:32]>.lock``, held
for the life of the chat and released by the kernel however the process ends (``kill -9``
included), so a crashed chat never leaves the workspace claimed. The file holds the owner's
pid for the message; it is never unlinked (an unlinked locked file would let a second claim
succeed on a new inode).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

from segue._errors import RuntimeFailure
from segue._workspace import Layout


class ChatBusy(RuntimeFailure):
    """Another chat holds the workspace."""

    def __init__(self, workspace_id: str, pid: str | None) -> None:
        who = f"process {pid}" if pid else "another process"
        super().__init__(
            f"workspace {workspace_id!r} already has a chat open ({who}); leave that chat "
            "first, or chat in another workspace with -w ID"
        )
        self.workspace_id = workspace_id
        self.pid = pid


def chat_lock_path(layout: Layout) -> Path:
    digest = hashlib.sha256(layout.workspace_id.encode()).hexdigest()[:32]
    return layout.home / "locks" / f"chat-{digest}.lock"


@contextlib.contextmanager
def hold_chat(layout: Layout) -> Iterator[None]:
    """Claim the workspace for this chat, or raise ChatBusy naming the holder."""
    path = chat_lock_path(layout)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip() or None
            raise ChatBusy(layout.workspace_id, holder) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the flock
