"""``file_read``, ``file_write`` and ``file_edit``: the workspace's files, bounded and atomic.

Invariants:

* Paths go through :class:`segue._tools.paths.Workspace`: nothing outside the workspace
  directory is read or written (``path_outside_workspace``).
* A read returns at most ``READ_MAX_LINES`` lines and ``READ_MAX_BYTES`` bytes, with the line
  to continue at; binary files (NUL or non-UTF-8 bytes up front) and non-regular files (a FIFO
  would block) are refused, never dumped.
* A write or edit replaces the file atomically (temp file in the same directory, fsync,
  rename, directory fsync), keeping an existing file's permission bits, and is then reported
  to ``track`` (the edited-file carryover). A refused or failed write tracks nothing.
* Writes outside the agent's :class:`segue._tools.profile.WriteScope` are refused
  (``write_not_allowed``).
* :meth:`_FileTool.protected` names the files later commands would run
  (:mod:`segue._tools.protected`); the approval gate refuses them outside ``full`` mode.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import os
import stat
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO

from segue._fsutil import fsync_dir, write_all
from segue._tools.base import ToolRefusal
from segue._tools.bounds import SNIFF_BYTES, looks_binary, number_lines
from segue._tools.editing import apply_edit
from segue._tools.paths import Workspace
from segue._tools.profile import ANYWHERE, WriteScope
from segue._tools.protected import bare_repository_reason, protected_reason

READ_MAX_LINES = 2000
READ_MAX_BYTES = 64 * 1024
READ_MAX_LINE_CHARS = 4000
#: Content larger than this is not written or edited in one call (it would not have fit
#: a model's output anyway; the cap keeps a runaway argument from filling the disk).
WRITE_MAX_BYTES = 16 << 20

Track = Callable[[str], None]


def _no_tracking(_rel: str) -> None:
    """For tool sets that do not keep a carryover."""


def _int_arg(args: Mapping[str, Any], key: str, default: int, low: int, high: int) -> int:
    value = args.get(key, default)
    if value is None:
        return default
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise ToolRefusal("invalid_argument", f"{key} must be an integer from {low} to {high}")
    return value


def _str_arg(args: Mapping[str, Any], key: str) -> str:
    value = args.get(key)
    if not isinstance(value, str):
        raise ToolRefusal("invalid_argument", f"{key} must be a string")
    return value


def _regular_file(real: Path, shown: str) -> os.stat_result:
    try:
        st = os.stat(real)
    except FileNotFoundError:
        raise ToolRefusal("not_found", f"{shown} does not exist") from None
    if stat.S_ISDIR(st.st_mode):
        raise ToolRefusal("is_a_directory", f"{shown} is a directory; use file_search to list it")
    if not stat.S_ISREG(st.st_mode):
        raise ToolRefusal("not_a_file", f"{shown} is not a regular file")
    return st


def _lines(fh: BinaryIO, cap: int) -> Iterator[bytes]:
    """The file's lines, each cut to its first ``cap`` bytes, so a gigabyte-long line costs
    ``cap`` bytes of memory, not a gigabyte."""
    while True:
        chunk = fh.readline(cap)
        if not chunk:
            return
        if len(chunk) == cap and not chunk.endswith(b"\n"):
            while True:
                rest = fh.readline(cap)
                if not rest or rest.endswith(b"\n"):
                    break
        yield chunk


#: How many diff lines an approval preview shows.
PREVIEW_MAX_LINES = 400


def _current_text(real: Path) -> str:
    """The file's text for a preview: empty when it does not exist yet."""
    try:
        st = os.stat(real)
    except FileNotFoundError:
        return ""
    if not stat.S_ISREG(st.st_mode) or st.st_size > WRITE_MAX_BYTES:
        raise ToolRefusal("not_a_file", f"{real.name} cannot be shown as text")
    return real.read_bytes().decode("utf-8", "replace")


def unified_diff(before: str, after: str, rel: str) -> str:
    """A unified diff of one file, cut to PREVIEW_MAX_LINES lines (with a count of the rest)."""
    lines = list(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile=f"a/{rel}" if before else "/dev/null",
            tofile=f"b/{rel}",
        )
    )
    shown = [line if line.endswith("\n") else line + "\n" for line in lines[:PREVIEW_MAX_LINES]]
    if len(lines) > PREVIEW_MAX_LINES:
        shown.append(f"… {len(lines) - PREVIEW_MAX_LINES} more diff lines\n")
    return "".join(shown) or f"(no change to {rel})\n"


def _crlf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:12]


def replace_file(path: Path, data: bytes, mode: int) -> None:
    """Atomically replace ``path`` with ``data`` and permission bits ``mode``."""
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".segue-tmp", dir=path.parent)
    try:
        try:
            os.fchmod(fd, mode)
            write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(name, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name)
        raise
    fsync_dir(path.parent)


class _FileTool:
    def __init__(
        self, workspace: Workspace, *, track: Track = _no_tracking, scope: WriteScope = ANYWHERE
    ) -> None:
        self.workspace = workspace
        self.track = track
        self.scope = scope

    def run(self, args: Mapping[str, Any]) -> Any:
        try:
            return self._run(args)
        except ToolRefusal as exc:
            return exc.to_obj()
        except OSError as exc:
            # The model should see why the file system said no (permissions, a full disk).
            return ToolRefusal("os_error", f"{exc.strerror or exc}").to_obj()

    def _run(self, args: Mapping[str, Any]) -> Any:
        raise NotImplementedError

    def protected(self, args: Mapping[str, Any]) -> str | None:
        """Why this call would write a file that makes later commands run code (R38), or
        None; the approval gate refuses such a call unless the mode is ``full``."""
        try:
            real = self.workspace.resolve(args.get("path"))
        except ToolRefusal:
            return None  # the tool refuses this path on its own
        rel = self.workspace.relative(real)
        return protected_reason(rel) or bare_repository_reason(self.workspace.root, rel)

    def _writable(self, args: Mapping[str, Any]) -> tuple[Path, str]:
        real = self.workspace.resolve(args.get("path"))
        rel = self.workspace.relative(real)
        if not self.scope.allows(rel):
            raise ToolRefusal("write_not_allowed", f"{self.scope.describe()}; not {rel}")
        return real, rel


class FileReadTool(_FileTool):
    name = "file_read"
    read_only = True
    description = (
        "Read a text file in the workspace. Lines come numbered like `cat -n`; at most "
        f"{READ_MAX_LINES} lines / {READ_MAX_BYTES // 1024} KiB per call. When the result says "
        "truncated, call again with offset set to nextOffset. Binary files are refused."
    )
    schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Workspace-relative (or absolute) path."},
            "offset": {"type": "integer", "minimum": 1, "description": "First line (1-based)."},
            "limit": {"type": "integer", "minimum": 1, "maximum": READ_MAX_LINES},
        },
        "required": ["path"],
        "additionalProperties": False,
    }

    def _run(self, args: Mapping[str, Any]) -> Any:
        real = self.workspace.resolve(args.get("path"))
        rel = self.workspace.relative(real)
        offset = _int_arg(args, "offset", 1, 1, 1 << 40)
        limit = _int_arg(args, "limit", READ_MAX_LINES, 1, READ_MAX_LINES)
        size = _regular_file(real, rel).st_size
        with open(real, "rb") as fh:
            if looks_binary(fh.read(SNIFF_BYTES)):
                raise ToolRefusal(
                    "binary_file", f"{rel} looks binary ({size} bytes); it is not shown as text"
                )
            fh.seek(0)
            lines: list[str] = []
            raw_bytes = 0
            number = 0
            more = False
            for raw in _lines(fh, READ_MAX_BYTES):
                number += 1
                if number < offset:
                    continue
                if len(lines) >= limit or raw_bytes > READ_MAX_BYTES:
                    more = True
                    break
                raw_bytes += len(raw)
                lines.append(raw.decode("utf-8", "replace").rstrip("\n").removesuffix("\r"))
        if offset > 1 and not lines:
            raise ToolRefusal(
                "invalid_argument", f"offset {offset} is past the end of {rel} ({number} lines)"
            )
        page = number_lines(
            lines,
            first=offset,
            max_bytes=READ_MAX_BYTES,
            max_line_chars=READ_MAX_LINE_CHARS,
            more=more,
        )
        result: dict[str, Any] = {
            "ok": True,
            "path": rel,
            "size": size,
            "startLine": page.first,
            "endLine": page.last,
            "content": page.content,
            "truncated": page.next_line is not None,
            "nextOffset": page.next_line,
        }
        if page.next_line is not None:
            result["notice"] = (
                f"truncated at the {page.reason}; continue at line {page.next_line} "
                f"(offset={page.next_line})"
            )
        if page.cut_lines:
            result["cutLines"] = page.cut_lines
        return result


class FileWriteTool(_FileTool):
    name = "file_write"
    read_only = False
    description = (
        "Create or overwrite a file in the workspace with the given content (atomic; parent "
        "directories are created). Prefer file_edit for changing part of an existing file."
    )
    schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
        "required": ["path", "content"],
        "additionalProperties": False,
    }

    def preview(self, args: Mapping[str, Any]) -> str:
        """The change this call would make, as a unified diff (R38 shows it before asking)."""
        real, rel = self._writable(args)
        return unified_diff(_current_text(real), _str_arg(args, "content"), rel)

    def _run(self, args: Mapping[str, Any]) -> Any:
        real, rel = self._writable(args)
        data = _str_arg(args, "content").encode("utf-8", "surrogatepass")
        if len(data) > WRITE_MAX_BYTES:
            raise ToolRefusal("too_large", f"content exceeds {WRITE_MAX_BYTES} bytes")
        mode = 0o644
        created = True
        try:
            st = os.stat(real)
        except FileNotFoundError:
            pass
        else:
            if stat.S_ISDIR(st.st_mode):
                raise ToolRefusal("is_a_directory", f"{rel} is a directory")
            if not stat.S_ISREG(st.st_mode):
                raise ToolRefusal("not_a_file", f"{rel} is not a regular file")
            mode = stat.S_IMODE(st.st_mode)
            created = False
        real.parent.mkdir(parents=True, exist_ok=True)
        replace_file(real, data, mode)
        self.track(rel)
        return {
            "ok": True,
            "path": rel,
            "bytes": len(data),
            "created": created,
            "sha256": _sha(data),
        }


class FileEditTool(_FileTool):
    name = "file_edit"
    read_only = False
    description = (
        "Replace text in a workspace file: old_string must match the file exactly (whitespace "
        "included) and occur exactly once, unless replace_all is true. Read the file first; "
        "copy text without the line-number prefix."
    )
    schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "old_string": {"type": "string"},
            "new_string": {"type": "string"},
            "replace_all": {"type": "boolean"},
        },
        "required": ["path", "old_string", "new_string"],
        "additionalProperties": False,
    }

    def preview(self, args: Mapping[str, Any]) -> str:
        """The change this call would make, as a unified diff (R38 shows it before asking)."""
        real, rel = self._writable(args)
        text = _current_text(real)
        old, new = _str_arg(args, "old_string"), _str_arg(args, "new_string")
        if "\r\n" in text and "\n" in old and old not in text:
            old, new = _crlf(old), _crlf(new)
        edited = apply_edit(text, old, new, replace_all=args.get("replace_all") is True)
        return unified_diff(text, edited.text, rel)

    def _run(self, args: Mapping[str, Any]) -> Any:
        real, rel = self._writable(args)
        old = _str_arg(args, "old_string")
        new = _str_arg(args, "new_string")
        replace_all = args.get("replace_all", False)
        if not isinstance(replace_all, bool):
            raise ToolRefusal("invalid_argument", "replace_all must be true or false")
        st = _regular_file(real, rel)
        if st.st_size > WRITE_MAX_BYTES:
            raise ToolRefusal("too_large", f"{rel} is larger than {WRITE_MAX_BYTES} bytes")
        data = real.read_bytes()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise ToolRefusal(
                "binary_file", f"{rel} is not UTF-8 text; it cannot be edited"
            ) from None
        if "\r\n" in text and "\n" in old and old not in text:
            # The model sees lines without their CR: match the file's own line endings.
            old, new = _crlf(old), _crlf(new)
        edited = apply_edit(text, old, new, replace_all=replace_all)
        out = edited.text.encode("utf-8", "surrogatepass")
        if len(out) > WRITE_MAX_BYTES:
            raise ToolRefusal("too_large", f"the edited file would exceed {WRITE_MAX_BYTES} bytes")
        replace_file(real, out, stat.S_IMODE(st.st_mode))
        self.track(rel)
        return {
            "ok": True,
            "path": rel,
            "replacements": edited.replacements,
            "line": edited.first_line,
            "bytes": len(out),
            "sha256": _sha(out),
        }
