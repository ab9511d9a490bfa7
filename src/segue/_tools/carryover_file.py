"""The persisted edited-file carryover: ``SEGUE_HOME/sessions/<id>/carryover.json``.

Invariants:

* Every read-modify-write runs under the workspace's transcript lock (re-entrant, so a
  rollover that already holds it can publish its handoff), and every write is atomic (temp
  file, fsync, rename), so the file is always one whole version.
* An edit is anchored to the transcript's next sequence number, read under that lock; see
  :mod:`segue._tools.carryover` for why that makes edits from before a reset harmless.
* A file that does not parse is renamed to ``carryover.json.bad`` (kept for inspection, not
  silently overwritten) and the carryover starts empty.

How a rollover uses it (R21), with :class:`Handoff`:

1. *prepare* — ``snapshot()`` computes the list the new window is given (current size, sha256
   prefix and mtime of each file, read from disk now) and the session renders it into the
   candidate system text that is counted and, on success, sent as is.
2. *cleanup* (before the append) — ``publish()`` replaces the persisted carryover with that
   snapshot, keyed to the new window's boundary row id; the pending edits are cleared.
3. *append* — the boundary reaches the transcript. From then on the new window's system text
   shows the snapshot on every request. Had the process died between 2 and 3, the old window
   is still current and adopts the snapshot's files back as its own edits; a crash after 3
   can never show the new window stale carryover, because nothing older than the snapshot is
   left on disk.

A failed fit never reaches step 2, so the current window's carryover is untouched.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import time
from collections.abc import Sequence
from pathlib import Path

from segue._fsutil import atomic_write, fsync_dir
from segue._history.protocol import TranscriptStore
from segue._messages import Row
from segue._tools.base import ToolRefusal
from segue._tools.carryover import (
    EMPTY,
    Anchor,
    Carryover,
    Edit,
    FileState,
    anchor_of,
    carried_into,
    from_obj,
    handed_off,
    record,
    to_hand_off,
    to_obj,
)
from segue._tools.paths import Workspace
from segue._workspace import Layout

FILE_NAME = "carryover.json"
#: A carryover file larger than this was not written by segue (64 files and 512 edits are a
#: few tens of KiB).
MAX_FILE_BYTES = 1 << 20
#: Files larger than this are listed without a digest rather than hashed at every rollover.
HASH_LIMIT = 64 << 20
SHA_PREFIX = 12


def carryover_path(layout: Layout) -> Path:
    return layout.session_dir / FILE_NAME


def file_state(root: Path, rel: str) -> FileState:
    """The current state of workspace file ``rel`` (read now, from disk)."""
    try:
        real = Workspace(root).resolve(rel)
    except ToolRefusal:
        return FileState(rel, "not-a-file")
    try:
        st = os.stat(real)
    except FileNotFoundError:
        return FileState(rel, "deleted")
    if not stat.S_ISREG(st.st_mode):
        return FileState(rel, "not-a-file")
    digest: str | None = None
    if st.st_size <= HASH_LIMIT:
        h = hashlib.sha256()
        with open(real, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
        digest = h.hexdigest()[:SHA_PREFIX]
    return FileState(rel, "present", st.st_size, digest, st.st_mtime_ns // 1_000_000)


def _parse(data: bytes) -> Carryover | None:
    if len(data) > MAX_FILE_BYTES:
        return None
    try:
        return from_obj(json.loads(data))
    except ValueError:  # MalformedCarryover, JSONDecodeError and UnicodeDecodeError alike
        return None


class CarryoverFile:
    """One workspace's persisted carryover, read and written under its transcript lock."""

    def __init__(self, layout: Layout, store: TranscriptStore, *, durable: bool = True) -> None:
        self.path = carryover_path(layout)
        self.store = store
        self.durable = durable

    def load(self) -> Carryover:
        try:
            with open(self.path, "rb") as fh:
                data = fh.read(MAX_FILE_BYTES + 1)
        except FileNotFoundError:
            return EMPTY
        carry = _parse(data)
        if carry is None:
            # Keep the damaged file for inspection; an empty carryover only costs the next
            # window its list of edited files, never a wrong one.
            with contextlib.suppress(FileNotFoundError):
                os.replace(self.path, self.path.with_name(FILE_NAME + ".bad"))
            return EMPTY
        return carry

    def _save(self, carry: Carryover) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = json.dumps(to_obj(carry), ensure_ascii=False, separators=(",", ":")).encode()
        atomic_write(self.path, data, durable=self.durable)

    def record_edit(self, root: Path, rel: str) -> None:
        """Note that ``rel`` (workspace-relative) was written or edited just now."""
        with self.store.locked():
            edit = Edit(rel, self.store.next_sequence(), time.time_ns() // 1_000_000)
            self._save(record(self.load(), edit, str(root)))

    def carried_into(self, window: Sequence[Row]) -> tuple[FileState, ...]:
        """The file list the window ``window`` holds was given when it opened."""
        return carried_into(self.load(), anchor_of(window))

    def handoff(self, window: Sequence[Row], new_boundary_id: str) -> Handoff:
        return Handoff(self, anchor_of(window), new_boundary_id)

    def clear(self) -> None:
        """Forget every edit and handoff (``/clear --soft``, a destroyed transcript)."""
        with self.store.locked():
            try:
                os.unlink(self.path)
            except FileNotFoundError:
                return
            if self.durable:
                fsync_dir(self.path.parent)

    def publish(self, anchor: Anchor, new_boundary_id: str, files: Sequence[FileState]) -> None:
        with self.store.locked():
            if not files and not self.path.exists():
                # Nothing was edited and nothing is carried: the new window is given an empty
                # list either way, so there is nothing to persist (and two fsyncs to save).
                return
            self._save(handed_off(self.load(), anchor, new_boundary_id, files))


class Handoff:
    """A window's carryover on its way to the window ``new_boundary_id`` opens."""

    def __init__(self, source: CarryoverFile, anchor: Anchor, new_boundary_id: str) -> None:
        self._source = source
        self._anchor = anchor
        self._new_boundary_id = new_boundary_id
        self._files: tuple[FileState, ...] | None = None

    def snapshot(self) -> tuple[FileState, ...]:
        """The list the new window is given, computed once (at the first call)."""
        if self._files is None:
            carry = self._source.load()
            paths = to_hand_off(carry, self._anchor)
            root = carry.root
            self._files = (
                tuple(file_state(Path(root), p) for p in paths) if root is not None else ()
            )
        return self._files

    def publish(self) -> None:
        """Persist the snapshot for the new window and clear the pending edits."""
        self._source.publish(self._anchor, self._new_boundary_id, self.snapshot())
