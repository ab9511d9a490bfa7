"""The memory context a context window was given: ``SEGUE_HOME/sessions/<id>/memory-context.json``.

Memory is read once per window, when the window's first request is built, and the formatted
entries are kept here under the window's id. Every later request of that window (the next
turn, a later process, the window's compaction request) sends the same system text, so the
provider's prompt cache keeps reading the prefix it wrote: a memory write, or a file saved
again unchanged, no longer makes the next turn rewrite the whole window. What the agent wrote
it already sees in the memory tool's result; the next window reads memory afresh: a rollover's
new window keeps the memory its admission prepared and sent (R21: promoted only once the
rollover's rows are appended), a compaction's or a ``/clear``'s reads it when it opens.

The file is a cache, never a source of truth: a missing, unreadable or foreign file (another
window's id) means "read memory now". Writing it is best effort: a failure costs only the
cache.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeGuard

from segue._fsutil import atomic_write
from segue._workspace import Layout

FILE_NAME = "memory-context.json"
VERSION = 1


@dataclass(frozen=True)
class Pin:
    """The memory entries of window ``window_id``, and ``candidate``: the entries a rollover
    admission prepared for the window it is opening (R21), which that window adopts once the
    rollover's rows are appended (it is the first window to ask that is not ``window_id``)."""

    window_id: str
    entries: tuple[str, ...]
    candidate: tuple[str, ...] | None = None


def pinned_path(layout: Layout) -> Path:
    return layout.session_dir / FILE_NAME


def memory_for(
    pin: Pin | None, window_id: str | None, fresh: Callable[[], list[str]]
) -> tuple[list[str], Pin | None]:
    """The entries a request of ``window_id`` uses (None: a rollover's candidate window), and
    the pin to write (None: leave the file as it is). Pure apart from calling ``fresh``.

    * the window's own pin: its entries; a candidate still beside them belongs to an admission
      that failed (the window is still open), so it is dropped;
    * another window with a candidate waiting: the rollover happened, the candidate is adopted;
    * a candidate being prepared: fresh entries, kept beside the current window's pin;
    * anything else: fresh entries, pinned to the window."""
    if window_id is None:
        entries = fresh()
        if pin is None:
            return entries, Pin("", (), tuple(entries))
        return entries, Pin(pin.window_id, pin.entries, tuple(entries))
    if pin is not None and pin.window_id == window_id:
        if pin.candidate is None:
            return list(pin.entries), None
        return list(pin.entries), Pin(pin.window_id, pin.entries)
    if pin is not None and pin.candidate is not None:
        return list(pin.candidate), Pin(window_id, pin.candidate)
    entries = fresh()
    return entries, Pin(window_id, tuple(entries))


def load_pin(path: Path) -> Pin | None:
    """The pin on disk, or None when there is none (or the file is not one this module
    wrote)."""
    try:
        obj = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(obj, dict) or obj.get("version") != VERSION:
        return None
    window_id, entries, candidate = obj.get("windowId"), obj.get("entries"), obj.get("candidate")
    if not isinstance(window_id, str) or not _strings(entries):
        return None
    if candidate is not None and not _strings(candidate):
        return None
    return Pin(window_id, tuple(entries), None if candidate is None else tuple(candidate))


def _strings(value: object) -> TypeGuard[list[str]]:
    return isinstance(value, list) and all(isinstance(e, str) for e in value)


def save_pin(path: Path, pin: Pin) -> bool:
    """Write ``pin``; False when the file could not be written (only the cache suffers)."""
    obj = {"version": VERSION, "windowId": pin.window_id, "entries": list(pin.entries),
           "candidate": None if pin.candidate is None else list(pin.candidate)}
    data = json.dumps(obj, ensure_ascii=False).encode("utf-8", "surrogatepass")
    try:
        atomic_write(path, data, durable=False)
    except OSError:
        return False
    return True


def forget_pin(path: Path) -> None:
    """Drop the pin (``/clear`` starts the root window again under the same id)."""
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    except OSError:
        # Unremovable: overwrite it with a pin no window id matches and no candidate.
        save_pin(path, Pin("", ()))
