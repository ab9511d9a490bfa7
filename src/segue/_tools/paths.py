"""Resolving the paths a model names inside the workspace directory.

Invariant: every path a file tool touches is the *real* path (symlinks resolved) of a file at
or under the workspace root, itself resolved once when the tools are built. A path is refused
with ``path_outside_workspace`` when it is absolute and outside the root, when ``..`` climbs
out of it, or when any component (the last one included, dangling or not) is a symlink
leading outside. Checking the resolved path, not the spelling, is what makes ``sub/../x``
fine and ``link-to-etc/passwd`` refused.

Paths inside ``private`` directories (segue's own ``SEGUE_HOME``, which may lie inside the
workspace, e.g. ``~/.segue`` when segue runs in ``~``) are refused as well: transcripts are
reached only through ``session_history``, which keeps the privacy floor (R11). The shell
tool cannot be fenced this way; it runs with the user's own rights.

A symlink swapped in between the check and the use (a race with another process) is the one
gap a path check cannot close; the tools open the resolved path with ``O_NOFOLLOW`` where it
matters so such a swap fails instead of writing through the new link.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from segue._tools.base import ToolRefusal

OUTSIDE = "path_outside_workspace"
PRIVATE = "path_private"


@dataclass(frozen=True)
class Workspace:
    """The directory the file and shell tools are pinned to."""

    root: Path
    private: tuple[Path, ...] = ()

    @classmethod
    def at(cls, directory: Path, *, private: tuple[Path, ...] = ()) -> Workspace:
        return cls(
            Path(os.path.realpath(directory)),
            tuple(Path(os.path.realpath(p)) for p in private),
        )

    def resolve(self, raw: object, *, argument: str = "path") -> Path:
        """The real path ``raw`` names, or ToolRefusal when it is not a usable path inside."""
        if not isinstance(raw, str) or not raw.strip():
            raise ToolRefusal("invalid_argument", f"{argument} must be a non-empty string")
        if "\x00" in raw:
            raise ToolRefusal("invalid_argument", f"{argument} must not contain NUL")
        given = Path(os.path.expanduser(raw)) if raw.startswith("~") else Path(raw)
        joined = given if given.is_absolute() else self.root / given
        real = Path(os.path.realpath(joined))
        if self.is_private(real):
            raise ToolRefusal(
                PRIVATE,
                f"{raw!r} is inside segue's own data directory; earlier conversation is read "
                "with session_history, not with file tools",
            )
        if not self.contains(real):
            raise ToolRefusal(
                OUTSIDE,
                f"{raw!r} resolves to {str(real)!r}, outside the workspace directory "
                f"{str(self.root)!r}; only files inside it can be used",
            )
        return real

    def contains(self, real: Path) -> bool:
        """Inside the root and outside every private directory."""
        inside = real == self.root or self.root in real.parents
        return inside and not self.is_private(real)

    def is_private(self, real: Path) -> bool:
        return any(real == p or p in real.parents for p in self.private)

    def relative(self, real: Path) -> str:
        """The workspace-relative spelling used in every tool result ('.' for the root)."""
        rel = real.relative_to(self.root)
        return PurePosixPath(rel).as_posix() if rel.parts else "."
