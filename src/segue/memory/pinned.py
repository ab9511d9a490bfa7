"""The memory context a context window was given: ``SEGUE_HOME/sessions/<id>/memory-context.json``.

Memory is read once per window, when the window's first request is built, and the formatted
entries are kept here under the window's id. Every later request of that window (the next
turn, a later process, the window's compaction request) sends the same system text, so the
provider's prompt cache keeps reading the prefix it wrote: a memory write, or a file saved
again unchanged, no longer makes the next turn rewrite the whole window. What the agent wrote
it already sees in the memory tool's result; the next window (a rollover, a compaction, a
``/clear``) reads memory afresh.

The file is a cache, never a source of truth: a missing, unreadable or foreign file (another
window's id) means "read memory now". Writing it is best effort: a failure costs only the
cache.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from segue.fsutil import atomic_write
from segue.workspace import Layout

FILE_NAME = "memory-context.json"
VERSION = 1


def pinned_path(layout: Layout) -> Path:
    return layout.session_dir / FILE_NAME


def load_pinned(path: Path, window_id: str) -> list[str] | None:
    """The entries pinned for ``window_id``, or None when there are none (or the file is
    not one this module wrote)."""
    try:
        obj = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(obj, dict) or obj.get("version") != VERSION:
        return None
    entries = obj.get("entries")
    if obj.get("windowId") != window_id or not isinstance(entries, list):
        return None
    if not all(isinstance(e, str) for e in entries):
        return None
    return list(entries)


def save_pinned(path: Path, window_id: str, entries: Sequence[str]) -> bool:
    """Pin ``entries`` for ``window_id``; False when the file could not be written."""
    data = json.dumps({"version": VERSION, "windowId": window_id, "entries": list(entries)},
                      ensure_ascii=False).encode("utf-8", "surrogatepass")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, data, durable=False)
    except OSError:
        return False
    return True


def forget_pinned(path: Path) -> None:
    """Drop the pin (``/clear`` starts the root window again under the same id)."""
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    except OSError:
        # Unremovable: overwrite it with a pin no window id matches.
        save_pinned(path, "", [])
