"""Resolved paths of a layout, computed once (pathlib joins showed up as the main per-append
cost in profiles)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from segue._workspace import Layout


@dataclass(frozen=True)
class Paths:
    session_dir: Path
    chat: Path
    archive: Path
    receipt: Path
    lock: Path


@lru_cache(maxsize=256)
def paths(layout: Layout) -> Paths:
    return Paths(layout.session_dir, layout.chat, layout.archive, layout.receipt, layout.lock)
