"""The workspaces under a home (``segue workspaces``), and where each one's working
directory is recorded.

Listing only reads: it creates no file or folder, takes no lock and never runs recovery, so it
is safe on a read-only home and on a Xum home. Row counts are newline counts over the
transcript files (a torn tail that recovery has not removed yet is not counted as a row).

A session records its working directory in ``segue-workspace.json`` next to its transcript
the first time it runs from a directory (and again if it moves); a session segue never ran
(a Xum session, an imported one) has none and lists ``null``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from segue._children import TaskLink, read_link, tree_order
from segue._errors import FileError, InvalidWorkspaceId, WorkspaceNotFound
from segue._fsutil import atomic_write, file_error, open_regular, read_json_object
from segue._workspace import (
    Layout,
    default_workspace_id,
    derive_workspace_id,
    validate_workspace_id,
)

WORKDIR_FILE = "segue-workspace.json"
_MAX_WORKDIR_FILE = 64 * 1024
_CHUNK = 1 << 20


@dataclass(frozen=True)
class WorkspaceInfo:
    workspace_id: str
    workdir: str | None
    rows: int
    size: int
    #: newest modification time of the transcript files, in ms since the epoch (None: empty)
    last_activity_ms: int | None
    #: R41: a task's child workspace says whose it is, with which agent, and how it ended
    task: TaskLink | None = None
    #: how many ancestors it has in the listing (0: top level)
    depth: int = 0

    @property
    def parent(self) -> str | None:
        return self.task.parent if self.task is not None else None

    def to_obj(self) -> dict[str, object]:
        return {
            "workspaceId": self.workspace_id,
            "workdir": self.workdir,
            "rows": self.rows,
            "size": self.size,
            "lastActivity": self.last_activity_ms,
            "parent": self.parent,
            "agent": self.task.agent if self.task is not None else None,
            "status": self.task.status if self.task is not None else None,
        }


def _count_lines(path: Path) -> int:
    """Newlines in ``path``; 0 when it is missing or not a regular file (listing never fails
    on one bad workspace: the history commands name the problem)."""
    try:
        fd = open_regular(path)
    except FileError:
        return 0
    if fd is None:
        return 0
    try:
        n = 0
        while chunk := os.read(fd, _CHUNK):
            n += chunk.count(b"\n")
        return n
    finally:
        os.close(fd)


def read_workdir(layout: Layout) -> str | None:
    value = read_json_object(layout.session_dir / WORKDIR_FILE, max_size=_MAX_WORKDIR_FILE)
    workdir = value.get("workdir") if value is not None else None
    return workdir if isinstance(workdir, str) else None


def record_workdir(layout: Layout, workdir: Path) -> None:
    """Remember where this workspace runs; a no-op when it is already recorded."""
    text = str(workdir.resolve())
    if read_workdir(layout) == text:
        return
    data = json.dumps({"workdir": text}, ensure_ascii=False).encode("utf-8", "surrogatepass")
    path = layout.session_dir / WORKDIR_FILE
    try:
        layout.session_dir.mkdir(parents=True, exist_ok=True)
        atomic_write(path, data + b"\n")
    except OSError as exc:
        raise file_error(exc, path, "write") from None


def describe(layout: Layout) -> WorkspaceInfo:
    rows = size = 0
    newest: int | None = None
    for path in (layout.archive, layout.chat):
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode):
            continue
        size += st.st_size
        rows += _count_lines(path)
        ms = st.st_mtime_ns // 1_000_000
        newest = ms if newest is None else max(newest, ms)
    return WorkspaceInfo(layout.workspace_id, read_workdir(layout), rows, size, newest,
                         read_link(layout))


def workspace_exists(layout: Layout) -> bool:
    """Whether the home has this workspace: its session folder is there (even empty, as a
    hard clear leaves it). Anything else at that path counts too, so that the store names
    the problem with it. Only looks: nothing is created."""
    return os.path.lexists(layout.session_dir)


def earlier_workspace(layout: Layout, cwd: Path | None = None) -> str | None:
    """The workspace this folder used before defaults went to the repository root, when
    ``layout`` is the root's default, has not been used yet, and that earlier one exists;
    else None. Only looks."""
    try:
        where = cwd if cwd is not None else Path.cwd()
        here = derive_workspace_id(where)
        defaulted = layout.workspace_id == default_workspace_id(where) != here
    except OSError:  # the working directory is gone
        return None
    if not defaulted or workspace_exists(layout):
        return None
    return here if workspace_exists(Layout(layout.home, here)) else None


def missing_workspace(layout: Layout, cwd: Path | None = None) -> WorkspaceNotFound:
    """The one-line error for a workspace that does not exist, naming the one the user
    probably meant when there is one (see :func:`earlier_workspace`)."""
    wid = layout.workspace_id
    earlier = earlier_workspace(layout, cwd)
    if earlier is not None:
        message = (
            f"no workspace {wid} (this repository's) under {layout.home} yet; this folder's "
            f"own workspace is {earlier}: use `segue -w {earlier} …`"
        )
    else:
        message = (
            f"no workspace {wid} under {layout.home}: nothing has run there yet "
            "(`segue workspaces` lists them)"
        )
    return WorkspaceNotFound(message, workspace_id=wid, home=layout.home)


def list_workspaces(home: Path) -> Iterator[WorkspaceInfo]:
    """Every session directory under ``home/sessions`` whose name is a valid workspace id,
    in name order, each task's child workspace right after its parent (R41, ``depth`` one
    more than the parent's). A missing home or sessions folder lists nothing."""
    try:
        names = sorted(os.listdir(home / "sessions"))
    except OSError:
        return
    found: dict[str, WorkspaceInfo] = {}
    for name in names:
        try:
            validate_workspace_id(name)
        except InvalidWorkspaceId:
            continue  # not a workspace folder
        if (home / "sessions" / name).is_dir():
            found[name] = describe(Layout(home, name))
    for wid, level in tree_order({w: info.parent for w, info in found.items()}):
        yield dataclasses.replace(found[wid], depth=level)
