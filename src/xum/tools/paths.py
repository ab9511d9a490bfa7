"""Resolving the paths a model names inside the workspace directory.

Invariant: every path a file tool touches is the *real* path (symlinks resolved) of a file at
or under the workspace root, itself resolved once when the tools are built. A path is refused
with ``path_outside_workspace`` when it is absolute and outside the root, when ``..`` climbs
out of it, or when any component (the last one included, dangling or not) is a symlink
leading outside. Checking the resolved path, not the spelling, is what makes ``sub/../x``
fine and ``link-to-etc/passwd`` refused.

A symlink swapped in between the check and the use (a race with another process) is the one
gap a path check cannot close; the tools open the resolved path with ``O_NOFOLLOW`` where it
matters so such a swap fails instead of writing through the new link.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from xum.tools.base import ToolRefusal

OUTSIDE = "path_outside_workspace"


@dataclass(frozen=True)
class Workspace:
    """The directory the file and shell tools are pinned to."""

    root: Path

    @classmethod
    def at(cls, directory: Path) -> Workspace:
        return cls(Path(os.path.realpath(directory)))

    def resolve(self, raw: object, *, argument: str = "path") -> Path:
        """The real path ``raw`` names, or ToolRefusal when it is not a usable path inside."""
        if not isinstance(raw, str) or not raw.strip():
            raise ToolRefusal("invalid_argument", f"{argument} must be a non-empty string")
        if "\x00" in raw:
            raise ToolRefusal("invalid_argument", f"{argument} must not contain NUL")
        given = Path(os.path.expanduser(raw)) if raw.startswith("~") else Path(raw)
        joined = given if given.is_absolute() else self.root / given
        real = Path(os.path.realpath(joined))
        if not self.contains(real):
            raise ToolRefusal(
                OUTSIDE,
                f"{raw!r} resolves to {str(real)!r}, outside the workspace directory "
                f"{str(self.root)!r}; only files inside it can be used",
            )
        return real

    def contains(self, real: Path) -> bool:
        return real == self.root or self.root in real.parents

    def relative(self, real: Path) -> str:
        """The workspace-relative spelling used in every tool result ('.' for the root)."""
        rel = real.relative_to(self.root)
        return PurePosixPath(rel).as_posix() if rel.parts else "."
