"""``file_search``: find workspace files by glob and/or search their contents, bounded.

Invariants:

* The walk starts inside the workspace and never leaves it: directories are not followed
  through symlinks, and a symlinked file is searched only when it resolves inside.
* ``.git``, ``.hg`` and ``.svn`` are skipped, and so are binary files (NUL or non-UTF-8 bytes
  up front) and files over ``MAX_FILE_BYTES`` (counted in ``skipped``).
* Results are in path order, at most ``limit`` of them and ``MAX_OUTPUT_BYTES`` in all, and a
  walk stops after ``MAX_FILES`` files or ``MAX_SCAN_BYTES`` read; whenever something was left
  out the result says ``truncated`` and why, so the model narrows the search instead of
  believing it saw everything.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from segue._tools.base import ToolRefusal
from segue._tools.bounds import SNIFF_BYTES, cut_text, looks_binary
from segue._tools.globs import compile_glob
from segue._tools.paths import Workspace

SKIP_DIRS = frozenset({".git", ".hg", ".svn"})
DEFAULT_LIMIT = 100
MAX_LIMIT = 500
MAX_FILES = 50_000
MAX_FILE_BYTES = 4 << 20
MAX_SCAN_BYTES = 64 << 20
MAX_OUTPUT_BYTES = 32 * 1024
MATCH_TEXT_BYTES = 300


@dataclass
class _Walk:
    files: int = 0
    bytes: int = 0
    binary: int = 0
    large: int = 0
    stopped: str | None = None
    out_bytes: int = 0
    results: list[Any] = field(default_factory=list)


def _files(workspace: Workspace, start: Path, walk: _Walk) -> Iterator[tuple[Path, str]]:
    """(real path, workspace-relative path) of every regular file under ``start``, sorted."""
    if not start.is_dir():
        walk.files += 1
        yield start, workspace.relative(start)
        return
    for directory, dirnames, filenames in os.walk(start, followlinks=False):
        dirnames[:] = sorted(
            d
            for d in dirnames
            if d not in SKIP_DIRS and not workspace.is_private(Path(directory, d).absolute())
        )
        for name in sorted(filenames):
            if walk.files >= MAX_FILES:
                walk.stopped = f"the walk stopped after {MAX_FILES} files"
                return
            path = Path(directory) / name
            if path.is_symlink():
                real = Path(os.path.realpath(path))
                if not workspace.contains(real):
                    continue
            else:
                real = path
            walk.files += 1
            yield real, workspace.relative(path)


class FileSearchTool:
    name = "file_search"
    read_only = True
    description = (
        "Find files in the workspace. `pattern` is a glob (`*.py`, `src/**/*.ts`; without a "
        "slash it matches file names at any depth); `query` searches file contents, literally "
        "or as a Python regex with regex=true (case-insensitive unless case_sensitive=true). "
        "With only a pattern, matching paths are listed; with a query, matching lines. "
        ".git and binary files are skipped; results are bounded and say when truncated."
    )
    schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string"},
            "query": {"type": "string"},
            "regex": {"type": "boolean"},
            "case_sensitive": {"type": "boolean"},
            "path": {"type": "string", "description": "Directory to search (default: the root)."},
            "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT},
        },
        "additionalProperties": False,
    }

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace

    def run(self, args: Mapping[str, Any]) -> Any:
        try:
            return self._run(args)
        except ToolRefusal as exc:
            return exc.to_obj()

    def _run(self, args: Mapping[str, Any]) -> Any:
        start = self.workspace.resolve(args.get("path", "."), argument="path")
        if not start.exists():
            raise ToolRefusal("not_found", f"{self.workspace.relative(start)} does not exist")
        pattern = args.get("pattern")
        if pattern is not None and not isinstance(pattern, str):
            raise ToolRefusal("invalid_argument", "pattern must be a string")
        glob = compile_glob(pattern) if pattern else None
        limit = args.get("limit", DEFAULT_LIMIT)
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_LIMIT:
            raise ToolRefusal("invalid_argument", f"limit must be an integer from 1 to {MAX_LIMIT}")
        matcher = _matcher(args)
        walk = _Walk()
        for real, rel in _files(self.workspace, start, walk):
            if glob is not None and glob.match(rel) is None:
                continue
            if matcher is None:
                if not self._add(walk, rel, limit):
                    break
            elif not self._search(walk, real, rel, matcher, limit):
                break
        return self._result(walk, matcher is not None)

    def _add(self, walk: _Walk, item: Any, limit: int) -> bool:
        """Add a result unless a bound is reached; False stops the walk."""
        if len(walk.results) >= limit:
            walk.stopped = f"the limit of {limit} results"
            return False
        size = len(str(item).encode("utf-8", "surrogatepass")) + 16
        if walk.out_bytes + size > MAX_OUTPUT_BYTES:
            walk.stopped = f"the output limit of {MAX_OUTPUT_BYTES} bytes"
            return False
        walk.out_bytes += size
        walk.results.append(item)
        return True

    def _search(
        self, walk: _Walk, real: Path, rel: str, matcher: re.Pattern[str], limit: int
    ) -> bool:
        try:
            st = os.stat(real)
            if not stat.S_ISREG(st.st_mode):
                return True
            if st.st_size > MAX_FILE_BYTES:
                walk.large += 1
                return True
            if walk.bytes + st.st_size > MAX_SCAN_BYTES:
                walk.stopped = f"the scan limit of {MAX_SCAN_BYTES >> 20} MiB read"
                return False
            data = real.read_bytes()
        except OSError:
            return True  # vanished or unreadable while walking: nothing to report from it
        walk.bytes += len(data)
        if looks_binary(data[:SNIFF_BYTES]):
            walk.binary += 1
            return True
        for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
            if matcher.search(line) is None:
                continue
            text, dropped = cut_text(line.strip(), MATCH_TEXT_BYTES)
            item = {"path": rel, "line": number, "text": text + ("…" if dropped else "")}
            if not self._add(walk, item, limit):
                return False
        return True

    @staticmethod
    def _result(walk: _Walk, content: bool) -> dict[str, Any]:
        out: dict[str, Any] = {"ok": True, ("matches" if content else "files"): walk.results}
        out["truncated"] = walk.stopped is not None
        if walk.stopped is not None:
            out["notice"] = f"results stopped at {walk.stopped}; narrow pattern, query or path"
        out["scanned"] = {"files": walk.files, "bytes": walk.bytes}
        if walk.binary or walk.large:
            out["skipped"] = {"binary": walk.binary, "tooLarge": walk.large}
        return out


def _matcher(args: Mapping[str, Any]) -> re.Pattern[str] | None:
    query = args.get("query")
    if query is None:
        return None
    if not isinstance(query, str) or not query:
        raise ToolRefusal("invalid_argument", "query must be a non-empty string")
    regex = args.get("regex", False)
    sensitive = args.get("case_sensitive", False)
    if not isinstance(regex, bool) or not isinstance(sensitive, bool):
        raise ToolRefusal("invalid_argument", "regex and case_sensitive must be true or false")
    flags = 0 if sensitive else re.IGNORECASE
    try:
        return re.compile(query if regex else re.escape(query), flags)
    except re.error as exc:
        raise ToolRefusal("invalid_argument", f"query is not a valid regex: {exc}") from None
