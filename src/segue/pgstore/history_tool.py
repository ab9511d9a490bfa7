"""``session_history`` over the PostgreSQL store: the same answers, byte for byte.

The tool's rules (bounds, floors, projection, cursors, R11 and R23–R27) live in
:mod:`segue.retrieval`, which reads JSONL files. Rather than a second implementation that
could drift, each call first brings a local **mirror** of the workspace up to date and then
runs the unchanged tool on it, so both stores answer every call identically by
construction. The mirror is a cache under ``<home>/pg-mirror/<store>/``, never the truth:

* It holds the table's lines byte for byte (archive rows before ``chat_pos``, chat after)
  and a stable receipt whose epoch is the PostgreSQL workspace epoch.
* Same epoch as last time: only the lines appended since (``pos >= next_pos``) are read, in
  one snapshot, and appended to the mirror's chat with the receipt republished under the same
  epoch: a verified append, so open cursors stay valid exactly as on disk (R26).
* Any other change (rotation, quarantine, hard clear, a migrated-in copy: the epoch moved),
  or a mirror that does not match its own record, rebuilds the files from one snapshot:
  new files, so every open cursor expires (``stale_cursor``), as a rewrite does on disk.
* The mirror is updated under its own lock (the JSONL lock of the mirror layout), the same
  lock the tool then reads under, so concurrent callers on one machine never see it half
  written. The database is read in one REPEATABLE READ snapshot per update.
* A lost connection while updating answers ``history_changed`` (call again); nothing below
  a floor is ever returned because pages only ever read a complete, consistent mirror.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from segue.errors import LockTimeout, StoreError
from segue.fsutil import atomic_write
from segue.history import lock as _lock
from segue.history.paths import paths
from segue.history.pg_schema import redact
from segue.history.postgres import PgSnapshot, PostgresStore
from segue.history.receipt import Receipt, current_stamps, read_receipt, receipt_matches
from segue.history.receipt import new_epoch as _new_epoch
from segue.retrieval.envelope import error
from segue.retrieval.tool import LOCK_TIMEOUT, MAX_SCAN_BYTES, MAX_SCAN_ROWS, SessionHistoryTool
from segue.workspace import Layout

META = "pg-mirror.json"


def mirror_home(home: Path, url: str) -> Path:
    """Where the mirrors of one store live under a segue home (one per database URL)."""
    digest = hashlib.sha256(redact(url).encode()).hexdigest()[:16]
    return home / "pg-mirror" / digest


def _meta_path(layout: Layout) -> Path:
    return layout.session_dir / META


def _read_meta(layout: Layout) -> dict[str, Any] | None:
    try:
        value = json.loads(_meta_path(layout).read_bytes())
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _write_meta(layout: Layout, epoch: str, next_pos: int) -> None:
    body = json.dumps({"version": 1, "epoch": epoch, "nextPos": next_pos}).encode()
    atomic_write(_meta_path(layout), body, durable=False)


def sync(store: PostgresStore, mirror: Layout, *, timeout: float = LOCK_TIMEOUT) -> str:
    """Bring ``mirror`` up to date with the store; returns "current", "appended" or
    "rebuilt". Raises :class:`StoreError` when the database cannot be read."""
    with _lock.hold(paths(mirror).lock, timeout), store.snapshot() as snap:
        state = snap.state
        meta = _read_meta(mirror)
        receipt = read_receipt(mirror)
        same = (
            meta is not None
            and state.epoch != ""
            and meta.get("epoch") == state.epoch
            and isinstance(meta.get("nextPos"), int)
            and receipt is not None
            and receipt.state == "stable"
            and receipt.epoch == state.epoch
            and receipt_matches(receipt, mirror)
        )
        if same and meta is not None and meta["nextPos"] == state.next_pos:
            return "current"
        if same and meta is not None and meta["nextPos"] < state.next_pos:
            _append(snap, mirror, int(meta["nextPos"]))
            return "appended"
        _rebuild(snap, mirror)
        return "rebuilt"


def _lines(snap: PgSnapshot, since: int) -> Iterator[bytes]:
    for found in snap.lines("pos >= %s", (since,)):
        yield found.raw + b"\n"


def _append(snap: PgSnapshot, mirror: Layout, since: int) -> None:
    p = paths(mirror)
    data = b"".join(_lines(snap, since))
    fd = os.open(p.chat, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    chat, archive = current_stamps(mirror)
    state = snap.state
    receipt = Receipt("stable", state.epoch, chat, archive, state.next_sequence)
    from segue.history.receipt import write_receipt

    write_receipt(mirror, receipt, durable=False)
    _write_meta(mirror, state.epoch, state.next_pos)


def _rebuild(snap: PgSnapshot, mirror: Layout) -> None:
    from segue.history.receipt import write_receipt

    p = paths(mirror)
    p.session_dir.mkdir(parents=True, exist_ok=True)
    _meta_path(mirror).unlink(missing_ok=True)
    temps = {
        "archive": p.archive.with_name(p.archive.name + ".mirror.tmp"),
        "chat": p.chat.with_name(p.chat.name + ".mirror.tmp"),
    }
    with open(temps["archive"], "wb") as archive_f, open(temps["chat"], "wb") as chat_f:
        handles = {"archive": archive_f, "chat": chat_f}
        for found in snap.lines():
            handles[found.line.source].write(found.raw + b"\n")
    # New files (new inodes): every cursor minted on the old mirror expires.
    os.replace(temps["archive"], p.archive)
    os.replace(temps["chat"], p.chat)
    state = snap.state
    epoch = state.epoch or _new_epoch()
    chat, archive = current_stamps(mirror)
    write_receipt(
        mirror, Receipt("stable", epoch, chat, archive, state.next_sequence), durable=False
    )
    _write_meta(mirror, epoch, state.next_pos)


class PgSessionHistoryTool:
    """``session_history`` for a workspace kept in PostgreSQL (see the module docstring)."""

    name = SessionHistoryTool.name
    description = SessionHistoryTool.description

    def __init__(
        self, store: PostgresStore, home: Path, *, lock_timeout: float = LOCK_TIMEOUT,
        max_bytes: int | None = None, max_rows: int | None = None, build_index: bool = True,
    ) -> None:
        self.store = store
        self.mirror = Layout(mirror_home(home, store.url), store.workspace_id)
        self.inner = SessionHistoryTool(
            self.mirror,
            lock_timeout=lock_timeout,
            max_bytes=MAX_SCAN_BYTES if max_bytes is None else max_bytes,
            max_rows=MAX_SCAN_ROWS if max_rows is None else max_rows,
            build_index=build_index,
        )
        self.lock_timeout = lock_timeout

    @property
    def schema(self) -> Mapping[str, Any]:
        return self.inner.schema

    def run(self, args: Mapping[str, Any]) -> dict[str, Any]:
        return self.call(args)

    def call(self, args: Mapping[str, Any]) -> dict[str, Any]:
        try:
            sync(self.store, self.mirror, timeout=self.lock_timeout)
        except LockTimeout as exc:
            return error("history_timeout", exc.message)
        except StoreError as exc:
            return error(
                "history_changed",
                f"the shared store could not be read ({exc.message}); call again",
            )
        return self.inner.call(args)
