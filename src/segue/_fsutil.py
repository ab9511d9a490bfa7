"""Small durable-file helpers: safe opening, atomic replacement, full writes, digests.

Shared by the store (transcripts, receipts, markers, rewrites), settings, exports,
calibration and memory files.

Safe opening (:func:`open_regular`): every file segue reads or writes is opened with
``O_NOFOLLOW | O_NONBLOCK`` and then ``fstat``-checked, so a final symbolic link is never
followed (segue never writes through a link), a FIFO never blocks the open, and a directory,
FIFO, socket or device is refused with a :class:`FileError` naming the path instead of being
read forever or replaced. OS failures become one-line messages naming the path
(:func:`describe_os_error`): "no space left on device at PATH", "permission denied".

Private by default (SPEC.md R38): transcripts hold everything the user and the model said.
Every file these helpers create or replace is mode 0600 whatever the umask (an export
included), a file opened for writing that is wider loses its group and other bits, and
:func:`keep_private` tightens segue's directories to 0700 and the files in a session
directory to 0600 on each write; :func:`wide_modes` lists what is still wider (``segue
history verify`` reports it).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from segue._errors import FileError

_CHUNK = 1 << 20

_REASONS = {
    errno.ENOSPC: "no space left on device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EROFS: "read-only file system",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.ENOENT: "no such file or directory",
    errno.ENOTDIR: "a parent is not a directory",
    errno.EISDIR: "is a directory",
    errno.ELOOP: "is a symbolic link (segue does not follow links here)",
    errno.EIO: "input/output error",
}


_KINDS = {
    stat.S_IFREG: "a regular file",
    stat.S_IFDIR: "a directory",
    stat.S_IFLNK: "a symbolic link",
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


def kind_of(mode: int) -> str:
    """What a file of ``mode`` is, in words."""
    return _KINDS.get(stat.S_IFMT(mode), "not a regular file")


def describe_os_error(exc: OSError, path: os.PathLike[str] | str | None = None) -> str:
    """One line for an OS failure: ``no space left on device at PATH``, or ``cannot ACCESS
    PATH: REASON`` (the access is in the caller's words, e.g. "open ... for writing")."""
    where = path if path is not None else exc.filename
    reason = _REASONS.get(exc.errno or 0) or (exc.strerror or str(exc)).lower()
    if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EROFS):
        return f"{reason} at {where}" if where is not None else reason
    return f"cannot access {where}: {reason}" if where is not None else reason


def file_error(
    exc: OSError, path: os.PathLike[str] | str, action: str = "use"
) -> FileError:
    """A FileError for ``exc`` raised while trying to ``action`` (e.g. "read", "write") ``path``."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EROFS):
        message = describe_os_error(exc, path)
    else:
        reason = _REASONS.get(exc.errno or 0) or (exc.strerror or str(exc)).lower()
        message = f"cannot {action} {path}: {reason}"
    return FileError(message, path=Path(path), errno=exc.errno)


def _refuse(path: os.PathLike[str] | str, mode: int, action: str) -> FileError:
    return FileError(
        f"cannot {action} {path}: it is {kind_of(mode)}, not a regular file",
        path=Path(path),
    )


def check_regular(path: os.PathLike[str] | str, action: str = "use") -> os.stat_result | None:
    """``lstat`` of ``path``: None when it does not exist, a FileError when it is anything but
    a regular file (a symbolic link included)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise file_error(exc, path, action) from None
    if not stat.S_ISREG(st.st_mode):
        raise _refuse(path, st.st_mode, action)
    return st


def _check_open(fd: int, path: os.PathLike[str] | str, verb: str, max_size: int | None) -> None:
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        raise _refuse(path, st.st_mode, verb)
    if max_size is not None and st.st_size > max_size:
        raise FileError(
            f"cannot {verb} {path}: {st.st_size} bytes is more than the {max_size} "
            "a file of this kind may have",
            path=Path(path),
        )
    # A regular file never blocks; clear the flag so later reads and writes behave exactly
    # as on a descriptor opened without it.
    os.set_blocking(fd, True)


def open_regular(
    path: os.PathLike[str] | str,
    flags: int = os.O_RDONLY,
    *,
    mode: int = 0o600,
    max_size: int | None = None,
    action: str | None = None,
) -> int | None:
    """A descriptor for the regular file at ``path``, opened without following a final
    symlink and without blocking; None when it does not exist and ``flags`` do not create it.

    Raises FileError, naming the path, for a link, directory, FIFO, socket or device, for a
    file over ``max_size`` bytes, and for any other OS failure (no access, no space)."""
    writing = flags & (os.O_WRONLY | os.O_RDWR)
    verb = action or ("open for writing" if writing else "read")
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, mode)
    except FileNotFoundError:
        if flags & os.O_CREAT:
            raise file_error(FileNotFoundError(errno.ENOENT, "missing"), path, verb) from None
        return None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EISDIR, errno.ENXIO, errno.ENODEV):
            # ELOOP: a final symlink under O_NOFOLLOW; ENXIO: a FIFO with no reader opened
            # for writing; EISDIR: a directory opened for writing. Say what is there.
            with contextlib.suppress(OSError):
                raise _refuse(path, os.lstat(path).st_mode, verb) from None
        raise file_error(exc, path, verb) from None
    try:
        _check_open(fd, path, verb, max_size)
        if writing:
            _tighten_fd(fd)
    except BaseException:
        os.close(fd)
        raise
    return fd


#: Group and other permission bits: none of segue's files or directories carries them.
_WIDE = 0o077


def _tighten_fd(fd: int) -> None:
    st = os.fstat(fd)
    if st.st_mode & _WIDE or stat.S_IMODE(st.st_mode) & 0o600 != 0o600:
        with contextlib.suppress(OSError):  # another user's file: not ours to change
            os.fchmod(fd, (stat.S_IMODE(st.st_mode) & 0o700) | 0o600)


def keep_private(*directories: Path, files_in: Path | None = None) -> None:
    """Tighten each of ``directories`` to 0700 and every regular file directly in
    ``files_in`` to 0600 (group and other bits removed), leaving links, another user's
    entries and Xum's ``partial.json`` alone. Never raises: it narrows, it decides nothing."""
    for directory in directories:
        with contextlib.suppress(OSError):
            st = os.lstat(directory)
            if stat.S_ISDIR(st.st_mode) and st.st_mode & _WIDE and st.st_uid == os.getuid():
                os.chmod(directory, stat.S_IMODE(st.st_mode) & 0o700)
    if files_in is None:
        return
    with contextlib.suppress(OSError), os.scandir(files_in) as entries:
        for entry in entries:
            if entry.name == "partial.json":
                continue  # Xum's stream in progress: never touched by segue
            with contextlib.suppress(OSError):
                st = entry.stat(follow_symlinks=False)
                if stat.S_ISREG(st.st_mode) and st.st_mode & _WIDE and st.st_uid == os.getuid():
                    os.chmod(entry.path, stat.S_IMODE(st.st_mode) & 0o700 | 0o600)


def wide_modes(*directories: Path, files_in: Path | None = None) -> list[str]:
    """What :func:`keep_private` would tighten, one line each (for ``history verify``)."""
    found: list[str] = []
    for directory in directories:
        with contextlib.suppress(OSError):
            st = os.lstat(directory)
            if stat.S_ISDIR(st.st_mode) and st.st_mode & _WIDE:
                found.append(
                    f"{directory} is mode {stat.S_IMODE(st.st_mode):04o}: other users may "
                    "list it; segue tightens it to 0700 on its next write"
                )
    if files_in is not None:
        with contextlib.suppress(OSError), os.scandir(files_in) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                with contextlib.suppress(OSError):
                    st = entry.stat(follow_symlinks=False)
                    if stat.S_ISREG(st.st_mode) and st.st_mode & _WIDE:
                        found.append(
                            f"{entry.path} is mode {stat.S_IMODE(st.st_mode):04o}: other "
                            "users may read it; segue tightens it to 0600 on its next write"
                        )
    return found


def open_regular_file(
    path: os.PathLike[str] | str, *, max_size: int | None = None
) -> BinaryIO | None:
    """:func:`open_regular` for reading, as an unbuffered binary file object."""
    fd = open_regular(path, max_size=max_size)
    if fd is None:
        return None
    return os.fdopen(fd, "rb", buffering=0)


def read_regular(path: os.PathLike[str] | str, *, max_size: int) -> bytes | None:
    """The bytes of a small regular file (at most ``max_size``); None when it is missing."""
    fd = open_regular(path, max_size=max_size)
    if fd is None:
        return None
    try:
        chunks: list[bytes] = []
        total = 0
        while True:
            buf = os.read(fd, min(_CHUNK, max_size + 1 - total))
            if not buf:
                break
            chunks.append(buf)
            total += len(buf)
            if total > max_size:
                raise FileError(
                    f"cannot read {path}: it grew past {max_size} bytes while being read",
                    path=Path(path),
                )
        return b"".join(chunks)
    except OSError as exc:
        raise file_error(exc, path, "read") from None
    finally:
        os.close(fd)


def read_json_object(path: os.PathLike[str] | str, *, max_size: int) -> dict[str, Any] | None:
    """The JSON object in a small regular file; None when the file is missing, unreadable,
    too large, not JSON or not an object (a hint segue keeps beside a transcript)."""
    import json

    try:
        data = read_regular(path, max_size=max_size)
    except FileError:
        return None
    if data is None:
        return None
    try:
        value = json.loads(data)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


class _Output:
    """What :func:`atomic_output` yields: ``write`` puts every byte or raises FileError."""

    def __init__(self, fd: int, path: Path) -> None:
        self._fd = fd
        self._path = path

    def write(self, data: bytes) -> None:
        try:
            write_all(self._fd, data)
        except OSError as exc:
            raise file_error(exc, self._path, "write") from None


@contextlib.contextmanager
def atomic_output(path: Path) -> Iterator[_Output]:
    """Write a new version of ``path`` (a user-named output such as an export) atomically:
    a temp file in the same directory, fsync, ``os.replace``, directory fsync.

    Refused with a FileError naming the path: a missing directory, and a target that exists
    but is not a regular file (a device node, a FIFO, a directory, a symbolic link), which
    is never replaced and never written through. Whatever stops the write (a full disk, an
    error of the producer) removes the temp file and leaves ``path`` as it was."""
    parent = path.parent
    if not parent.is_dir():
        raise FileError(f"cannot write {path}: directory {parent} does not exist", path=path)
    check_regular(path, "replace")
    try:
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=parent)
    except OSError as exc:
        raise file_error(exc, path, "write") from None
    tmp = Path(name)
    try:
        try:
            yield _Output(fd, path)
            os.fchmod(fd, 0o600)
            os.fsync(fd)
        except OSError as exc:
            raise file_error(exc, path, "write") from None
        finally:
            os.close(fd)
        check_regular(path, "replace")  # it may have become something else meanwhile
        try:
            os.replace(tmp, path)
            fsync_dir(parent)
        except OSError as exc:
            raise file_error(exc, path, "write") from None
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise

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
        os.fchmod(fd, 0o600)
    else:
        tmp = path.with_name(temp_name)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        os.fchmod(fd, 0o600)
    try:
        try:
            write_all(fd, data)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException as exc:
        if temp_name is None or tmp.exists():
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        if isinstance(exc, OSError) and exc.filename is None:
            # a failed write names no file: name the one being replaced (same OSError
            # subclass, so callers catching OSError still do)
            raise OSError(exc.errno, exc.strerror, str(path)) from exc
        raise
    if durable:
        fsync_dir(path.parent)


def sha256_range(path: Path, start: int, stop: int) -> str | None:
    """Hex digest of ``path[start:stop]``; None when the file is missing or too short."""
    f = open_regular_file(path)
    if f is None:
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
    fd = open_regular(path)
    if fd is None:
        raise FileNotFoundError(errno.ENOENT, "no such file", str(path))
    try:
        data = os.pread(fd, stop - start, start)
    finally:
        os.close(fd)
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
