"""Which files an import reads, and how it reads them: exactly as the store opens its own
(:func:`segue._fsutil.open_regular`): no final symbolic link followed, never blocking, regular
files only, at most :data:`MAX_FILE_BYTES`, read line by line.

A FIFO, socket, device or symbolic link named ``*.jsonl`` inside a directory being imported is
left out and named (:class:`Skipped`), so a stray ``mkfifo`` cannot hang an import and a link to
``/dev/zero`` cannot fill memory; the same thing named directly on the command line refuses the
import.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from segue._errors import FileError
from segue._fsutil import kind_of, open_regular
from segue._importers.entries import ImportRefused

#: Largest session file an import reads (bytes); a bigger one is not a session file.
MAX_FILE_BYTES = 1 << 30
_READ = 1 << 20


@dataclass(frozen=True)
class Skipped:
    path: Path
    why: str


def regular(path: Path) -> str | None:
    """Why ``path`` (not followed) is not a regular file, or None when it is one."""
    try:
        mode = os.lstat(path).st_mode
    except OSError as exc:
        return exc.strerror or "cannot be read"
    return None if stat.S_ISREG(mode) else f"{kind_of(mode)}, not a regular file"


def lines(path: Path) -> Iterator[bytes]:
    """The lines of the regular file at ``path``, without their ``\\n``, read in bounded
    chunks; ImportRefused (naming the path) for anything else, a file past the size cap
    included, also one that grows past it while being read."""
    try:
        fd = open_regular(path, max_size=MAX_FILE_BYTES, action="import")
    except FileError as exc:
        raise ImportRefused(exc.message) from None
    if fd is None:
        raise ImportRefused(f"{path}: no such file")
    total = 0
    tail: list[bytes] = []  # the line in progress, in pieces (a long line is not re-copied)
    try:
        while True:
            try:
                chunk = os.read(fd, _READ)
            except OSError as exc:
                raise ImportRefused(f"cannot import {path}: {exc.strerror}") from None
            if not chunk:
                break
            total += len(chunk)
            if total > MAX_FILE_BYTES:
                raise ImportRefused(
                    f"cannot import {path}: it grew past {MAX_FILE_BYTES} bytes while being read"
                )
            pieces = chunk.split(b"\n")
            if len(pieces) == 1:
                tail.append(chunk)
                continue
            yield b"".join([*tail, pieces[0]])
            yield from pieces[1:-1]
            tail = [pieces[-1]]
        if any(tail):
            yield b"".join(tail)
    finally:
        os.close(fd)
