"""Transaction markers (R34): a rewrite, rotation, truncation or clear in progress.

Before a multi-step change of the transcript files the writer publishes a marker (atomically,
durably) at ``sessions/<id>/history-transaction.json``; it removes the marker when the change
is complete. A marker left behind by a crash tells the next locked operation how to finish or
roll back, deterministically. Format (version ``segue-txn-1``, digests over raw bytes so content
with invalid UTF-8 is recognized)::

    {"version":"segue-txn-1","op":"rotate"|"rewrite"|"truncate"|"clear",
     "target":"chat"|"archive"|null,     # the file a rewrite/truncate changes
     "ino":<inode of the file being replaced or truncated>|null,
     "cut":<rotate: chat offset of the newest boundary>|null,
     "temp":"<file name of the replacement being built>"|null,
     "before":<expect>|null,   # rotate: chat as it was; rewrite: the target as it was
     "archive":<expect>|null,  # rotate: the archive after the move
     "final":<expect>|null}    # the target (or chat, for rotate) after the change
    <expect> = {"size":N,"from":F,"sha256":"<hex of file[F:N]>"}

An ``expect`` digests the bytes from ``from`` to ``size``: the whole file for a rewritten file,
the appended region for the archive (its older bytes are never touched by a rotation), and a
window before the cut point for a truncation (the bytes before it are not changed by it).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import msgspec

from segue._fsutil import atomic_write, file_size, fsync_dir, sha256_range
from segue._history.paths import paths
from segue._workspace import Layout

MARKER_VERSION = "segue-txn-1"
MARKER_NAME = "history-transaction.json"
_MAX_MARKER = 64 * 1024

Op = Literal["rotate", "rewrite", "truncate", "clear"]
Target = Literal["chat", "archive"]


@dataclass(frozen=True)
class Expect:
    size: int
    start: int
    sha256: str

    def holds(self, path: Path) -> bool:
        return file_size(path) == self.size and self.prefix_holds(path)

    def prefix_holds(self, path: Path) -> bool:
        """The expected bytes are present (the file may be longer)."""
        return sha256_range(path, self.start, self.size) == self.sha256


@dataclass(frozen=True)
class Marker:
    op: Op
    target: Target | None = None
    ino: int | None = None
    cut: int | None = None
    temp: str | None = None
    before: Expect | None = None
    archive: Expect | None = None
    final: Expect | None = None


def marker_path(layout: Layout) -> Path:
    return paths(layout).session_dir / MARKER_NAME


def expect_of(data: bytes, *, start: int = 0) -> Expect:
    """An Expect for a file whose bytes from ``start`` on are ``data``."""
    return Expect(size=start + len(data), start=start, sha256=hashlib.sha256(data).hexdigest())


def _expect_obj(e: Expect | None) -> dict[str, Any] | None:
    return None if e is None else {"size": e.size, "from": e.start, "sha256": e.sha256}


def _expect_from(obj: Any) -> Expect | None:
    if obj is None:
        return None
    size, start, digest = obj["size"], obj["from"], obj["sha256"]
    ok = isinstance(size, int) and isinstance(start, int) and isinstance(digest, str)
    if not ok or not 0 <= start <= size:
        raise ValueError("bad expect")
    return Expect(size, start, digest)


def write_marker(layout: Layout, m: Marker, *, durable: bool) -> None:
    obj = {
        "version": MARKER_VERSION,
        "op": m.op,
        "target": m.target,
        "ino": m.ino,
        "cut": m.cut,
        "temp": m.temp,
        "before": _expect_obj(m.before),
        "archive": _expect_obj(m.archive),
        "final": _expect_obj(m.final),
    }
    atomic_write(marker_path(layout), msgspec.json.encode(obj) + b"\n", durable=durable)


class MarkerUnreadable(Exception):
    """A marker exists but cannot be trusted (corrupt, foreign, not a regular file)."""


def read_marker(layout: Layout) -> Marker | None:
    """The marker, None when there is none; MarkerUnreadable when one exists but is bad."""
    path = marker_path(layout)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            return None
        raise MarkerUnreadable(f"{path}: {exc.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > _MAX_MARKER:
            raise MarkerUnreadable(f"{path} is not a small regular file")
        data = os.pread(fd, _MAX_MARKER + 1, 0)
    finally:
        os.close(fd)
    try:
        return _marker_from(msgspec.json.decode(data))
    except (msgspec.DecodeError, KeyError, TypeError, ValueError) as exc:
        raise MarkerUnreadable(f"{path}: {exc}") from None


def _marker_from(obj: Any) -> Marker:
    if not isinstance(obj, dict) or obj.get("version") != MARKER_VERSION:
        raise ValueError("unknown marker version")
    op = obj["op"]
    target = obj.get("target")
    if op not in ("rotate", "rewrite", "truncate", "clear") or target not in (
        None, "chat", "archive",
    ):
        raise ValueError("bad op or target")
    for key in ("ino", "cut"):
        if obj.get(key) is not None and not isinstance(obj[key], int):
            raise ValueError(f"bad {key}")
    temp = obj.get("temp")
    if temp is not None and (not isinstance(temp, str) or "/" in temp or temp in ("", ".", "..")):
        raise ValueError("bad temp name")
    return Marker(
        op=op,
        target=target,
        ino=obj.get("ino"),
        cut=obj.get("cut"),
        temp=temp,
        before=_expect_from(obj.get("before")),
        archive=_expect_from(obj.get("archive")),
        final=_expect_from(obj.get("final")),
    )


def remove_marker(layout: Layout, *, durable: bool) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(marker_path(layout))
    if durable:
        fsync_dir(paths(layout).session_dir)
