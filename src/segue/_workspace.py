"""Workspace ids and the on-disk layout under SEGUE_HOME (SPEC.md §3).

Path arithmetic, plus one read-only look up the directory tree: :func:`repository_root`
finds the enclosing git repository (a ``.git`` directory or file) without running git, so the
default workspace of every folder of a checkout is the checkout's.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from segue._errors import InvalidWorkspaceId

_ID_RE = re.compile(r"[A-Za-z0-9._-]{1,64}")


def validate_workspace_id(workspace_id: str) -> str:
    """Return the id unchanged, or raise InvalidWorkspaceId.

    `.` and `..` are refused as well: they would name a directory other than their own.
    """
    if not _ID_RE.fullmatch(workspace_id) or workspace_id in (".", ".."):
        raise InvalidWorkspaceId(workspace_id)
    return workspace_id


def derive_workspace_id(directory: Path) -> str:
    """The default workspace id for a working directory: its name, made safe, plus a short
    hash of the full path so two checkouts named alike do not share a transcript."""
    resolved = directory.resolve()
    name = re.sub(r"[^A-Za-z0-9._-]", "-", resolved.name or "root").strip(".-")[:48] or "ws"
    digest = hashlib.sha256(str(resolved).encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{name}-{digest}"


def repository_root(directory: Path) -> Path | None:
    """The nearest directory at or above ``directory`` holding a ``.git`` directory or file
    (a worktree or submodule has a file), or None outside a repository. Like git, the walk
    does not step up into a directory listed in ``GIT_CEILING_DIRECTORIES``."""
    resolved = directory.resolve()
    ceilings = {
        Path(p).resolve()
        for p in os.environ.get("GIT_CEILING_DIRECTORIES", "").split(os.pathsep)
        if p and os.path.isabs(p)
    }
    for candidate in (resolved, *resolved.parents):
        if candidate != resolved and candidate in ceilings:
            return None  # git does not step up into a ceiling directory
        git = os.path.join(candidate, ".git")
        if os.path.isdir(git) or os.path.isfile(git):  # False, not an error, when unreadable
            return candidate
    return None


def default_workspace_id(directory: Path) -> str:
    """The workspace of a working directory: its git repository's root when it is inside
    one (every subfolder of a checkout shares one transcript), else the directory itself."""
    return derive_workspace_id(repository_root(directory) or directory)


def default_home() -> Path:
    env = os.environ.get("SEGUE_HOME")
    return Path(env) if env else Path.home() / ".segue"


@dataclass(frozen=True)
class Layout:
    """Where one workspace's files live."""

    home: Path
    workspace_id: str

    def __post_init__(self) -> None:
        validate_workspace_id(self.workspace_id)

    @property
    def session_dir(self) -> Path:
        return self.home / "sessions" / self.workspace_id

    @property
    def index_dir(self) -> Path:
        """Where the history index lives (the session's own folder)."""
        return self.session_dir

    @property
    def chat(self) -> Path:
        return self.session_dir / "chat.jsonl"

    @property
    def archive(self) -> Path:
        return self.session_dir / "chat-archive.jsonl"

    @property
    def receipt(self) -> Path:
        return self.session_dir / "history-append-provenance.json"

    @property
    def lock(self) -> Path:
        digest = hashlib.sha256(self.workspace_id.encode()).hexdigest()[:32]
        return self.home / "locks" / f"history-{digest}.lock"

    @property
    def notes(self) -> Path:
        return self.home / "memories" / "workspace" / self.workspace_id / "context-notes.md"

    @property
    def script_positions(self) -> Path:
        """Where the scripted provider keeps this workspace's script positions."""
        return self.home / "providers" / self.workspace_id

    @property
    def settings(self) -> Path:
        return self.home / "settings.json"
