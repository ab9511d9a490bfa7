"""Memory files on disk: SEGUE_HOME/memories/workspace/<workspaceId>/*.md (the model's tool
over them is :mod:`segue._tools.memory`).

The model addresses files as ``/memories/workspace/<name>.md``; names are plain file names
(no directories, no dot files), so a path can never leave the workspace's memory folder.
Writes are atomic (temp file, fsync, rename). The notes file is capped at 8 KiB (R14).
"""

from __future__ import annotations

import re
from pathlib import Path

from segue._memory.hot import Memory
from segue._workspace import Layout

PREFIX = "/memories/workspace/"
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}\.md")
FILE_BYTES = 64 * 1024


def memory_dir(layout: Layout) -> Path:
    return layout.notes.parent


def load_memories(layout: Layout) -> list[Memory]:
    folder = memory_dir(layout)
    if not folder.is_dir():
        return []
    out: list[Memory] = []
    for path in sorted(folder.glob("*.md")):
        if not path.is_file() or path.is_symlink():
            continue
        data = path.read_bytes()[:FILE_BYTES]
        out.append(Memory(path.name, data.decode("utf-8", "replace"), path.stat().st_mtime_ns))
    return out


def resolve(layout: Layout, path: object) -> Path | None:
    """The file a model's ``/memories/workspace/<name>.md`` names, or None when it names none
    (a plain file name only: a path can never leave the workspace's memory folder)."""
    if not isinstance(path, str) or not path.startswith(PREFIX):
        return None
    name = path[len(PREFIX) :]
    if not _NAME_RE.fullmatch(name):
        return None
    return memory_dir(layout) / name
