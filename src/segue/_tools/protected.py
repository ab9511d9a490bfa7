"""Files the file tools never write, because later approved commands would run what they say
(SPEC.md R38). Pure: a table over workspace-relative paths.

``git status`` looks harmless, yet it runs ``core.fsmonitor`` from ``.git/config``; ``git
commit`` runs ``.git/hooks/*``; ``.gitattributes`` names filter and diff programs; direnv runs
``.envrc``; a shell runs its rc files; ssh runs a ``ProxyCommand``; segue reads its agent files
(and their tool rules) from ``.segue/``. A model that may edit files (``auto-edit``) could
otherwise turn the next command the user approves into any command at all.

The path checked is the *real* path (symlinks resolved) relative to the workspace root, so a
link named ``notes.txt`` that points at ``.git/config`` is caught. Components are compared
case-folded, because on a case-insensitive file system ``.GIT/CONFIG`` is ``.git/config``.
The plan agent's ``.segue/plans/*.md`` files are plain notes nothing runs, and stay writable.

A directory holding ``HEAD``, ``config``, ``objects`` and ``refs`` is a bare repository to git,
which then reads that ``config``: :func:`bare_repository_reason` refuses a write of one of those
names where another already is, so the file tools cannot assemble one.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

#: Directories (at any depth) whose every file is protected, and why.
PROTECTED_DIRS: dict[str, str] = {
    ".git": "git runs the programs its configuration and hooks name",
    ".hg": "Mercurial runs the hooks its configuration names",
    ".ssh": "ssh runs the ProxyCommand and LocalCommand its configuration names",
    ".segue": "segue reads agent definitions and their tool rules from it",
}
#: File names (at any depth) that are protected, and why.
PROTECTED_NAMES: dict[str, str] = {
    ".gitattributes": "its filter and diff drivers make git run programs",
    ".gitconfig": "git runs the aliases, pager and hooks it names",
    ".gitmodules": "it tells git where to fetch and what to run for submodules",
    ".envrc": "direnv runs it on entering the directory",
    **dict.fromkeys(
        (".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc",
         ".zshenv", ".zprofile", ".zlogin", ".zlogout", ".kshrc", ".cshrc", ".tcshrc",
         ".login", ".logout", ".inputrc"),
        "a shell runs it when it starts",
    ),
}
#: Nested directories (``.config/git``): every file under them is protected.
PROTECTED_TREES: dict[tuple[str, ...], str] = {
    (".config", "git"): "git runs the aliases, pager and hooks its configuration names",
    (".config", "fish"): "fish runs its configuration when it starts",
}
#: Exceptions: writable although under a protected directory.
WRITABLE_TREES: tuple[tuple[str, ...], ...] = ((".segue", "plans"),)


#: What makes a directory a git directory of its own (a bare repository): git finds it when a
#: command runs there, and reads its ``config`` (``core.fsmonitor``, ``diff.external``…).
GIT_DIR_MARKERS = ("HEAD", "config", "objects", "refs")


_GIT_DIR_FILES = ("HEAD", "config")
_GIT_DIR_DIRS = ("objects", "refs")


def _is_marker(path: Path) -> bool:
    return path.is_file() if path.name in _GIT_DIR_FILES else path.is_dir()


def bare_repository_reason(root: Path, rel: str) -> str | None:
    """Why writing ``rel`` (under ``root``) would help make a directory look like a bare git
    repository, or None: a write of one marker where another marker already is."""
    parts = PurePosixPath(rel).parts
    for index, part in enumerate(parts):
        is_file = index == len(parts) - 1
        if part not in (_GIT_DIR_FILES if is_file else _GIT_DIR_DIRS):
            continue  # a ``config/`` directory or a file named ``refs`` is no marker
        holder = root.joinpath(*parts[:index])
        others = [m for m in GIT_DIR_MARKERS if m != part and _is_marker(holder / m)]
        if others:
            where = PurePosixPath(*parts[:index]).as_posix() if index else "the workspace"
            return (
                f"{rel} would make {where} look like a git repository's own directory (it "
                f"already holds {', '.join(others)}): git would run what its config names"
            )
    return None


def protected_reason(rel: str) -> str | None:
    """Why the workspace-relative path ``rel`` may not be written by a file tool, or None."""
    parts = tuple(p.casefold() for p in PurePosixPath(rel).parts if p not in ("", "."))
    if not parts:
        return None
    for tree in WRITABLE_TREES:
        if parts[: len(tree)] == tree and len(parts) > len(tree):
            return None
    for index, part in enumerate(parts):
        if part in PROTECTED_DIRS and index < len(parts) - 1:
            return f"{rel} is inside {part}/: {PROTECTED_DIRS[part]}"
        for tree, why in PROTECTED_TREES.items():
            if parts[index : index + len(tree)] == tree and index + len(tree) < len(parts):
                return f"{rel} is inside {'/'.join(tree)}/: {why}"
    name = parts[-1]
    if name in PROTECTED_NAMES:
        return f"{rel} is protected: {PROTECTED_NAMES[name]}"
    if name in PROTECTED_DIRS:
        # ``.git`` as a file points git at another directory (a worktree's gitdir: line).
        return f"{rel} is protected: {PROTECTED_DIRS[name]}"
    return None
