"""Small durable-file helpers: atomic replacement, full writes, digests of byte ranges.

Shared by the store (receipts, markers, rewrites), settings, calibration and memory files."""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from pathlib import Path

_CHUNK = 1 << 20


def fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_all(fd: int, data: bytes) -> None:
    """Write every byte. A regular file may take fewer bytes than asked (a signal, a full
    disk); the remainder goes in the next call, never silently dropped."""
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def atomic_write(
    path: Path, data: bytes, *, durable: bool = True, temp_name: str | None = None
) -> None:
    """Replace ``path`` with ``data`` so a reader sees the old or the new file, never a mix:
    temp file in the same directory, fsync, ``os.replace``, fsync the directory. The path is
    replaced even when it is a symlink or a FIFO (the rename swaps the directory entry, it
    never writes through it).

    Without ``temp_name`` the temp file gets a unique name and is removed whatever stops the
    write (a full disk, KeyboardInterrupt). With ``temp_name`` (a rewrite whose recovery must
    find its temp file by name) it is removed only when the rename itself fails.
    """
    if temp_name is None:
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        tmp = Path(name)
        os.fchmod(fd, 0o644)
    else:
        tmp = path.with_name(temp_name)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
    try:
        try:
            write_all(fd, data)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        if temp_name is None or tmp.exists():
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        raise
    if durable:
        fsync_dir(path.parent)


def sha256_range(path: Path, start: int, stop: int) -> str | None:
    """Hex digest of ``path[start:stop]``; None when the file is missing or too short."""
    try:
        f = open(path, "rb", buffering=0)  # noqa: SIM115 - closed below
    except FileNotFoundError:
        return None
    try:
        if os.fstat(f.fileno()).st_size < stop:
            return None
        f.seek(start)
        h = hashlib.sha256()
        left = stop - start
        while left > 0:
            buf = f.read(min(_CHUNK, left))
            if not buf:
                return None
            h.update(buf)
            left -= len(buf)
        return h.hexdigest()
    finally:
        f.close()


def read_range(path: Path, start: int, stop: int) -> bytes:
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read(stop - start)
    if len(data) != stop - start:
        raise OSError(f"{path} is shorter than expected ({start}..{stop})")
    return data


def file_size(path: Path) -> int | None:
    try:
        return os.stat(path).st_size
    except FileNotFoundError:
        return None


def last_byte(path: Path, size: int) -> bytes:
    if size == 0:
        return b""
    return read_range(path, size - 1, size)
