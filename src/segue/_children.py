"""Child workspaces: where a sub-agent's task runs and how it is tied to its parent (R41).

A task started with the ``task`` tool runs in a workspace of its own, next to its parent's
under ``SEGUE_HOME/sessions/``: its own transcript, windows, rollovers and floor. What makes
it a child is one small file in its session directory, ``segue-task.json``::

    {"parent": "<parent workspace id>", "agent": "explore", "prompt": "…",
     "createdAt": <ms>, "status": "running"|"completed"|"paused"|"rejected"|"error",
     "source"?: {"format": "claude-code"|"codex", "session": "…", "agent": "…"}}

``source`` marks a child imported from another agent's sub-agent (a Claude Code sidechain, a
Codex sub-agent session; status ``imported``): a re-import finds it by its source.

Ids are readable and stable: the parent's id (shortened with a hash when it is long) plus
``.t<n>``, the first free number, claimed with an atomic ``mkdir`` so two processes never
share one. The id alone proves nothing: only the link file makes a workspace a child, and a
descendant is found by walking links **up** from the task to the asking workspace, so a
workspace reads its own tasks (and theirs), never its parent's nor a sibling's.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from segue._errors import InvalidWorkspaceId
from segue._fsutil import atomic_write, file_error, read_json_object
from segue._workspace import Layout, validate_workspace_id

TASK_FILE = "segue-task.json"
#: How deep tasks may nest (a task of a task of a task); a bound on every walk up, too.
MAX_DEPTH = 4
#: The longest chain followed when looking for an ancestor (imported histories may nest).
_MAX_WALK = 16
_MAX_LINK_FILE = 64 * 1024
#: How much of a prompt the link keeps (the whole prompt is the child's first row).
_PROMPT_CHARS = 500
_MAX_ID = 64


@dataclass(frozen=True)
class TaskLink:
    """What ``segue-task.json`` says about a child workspace."""

    parent: str
    agent: str
    prompt: str
    created_ms: int | None
    status: str | None
    #: where an imported child came from (None: a task segue ran)
    source: dict[str, str] | None = None

    def to_obj(self) -> dict[str, object]:
        obj: dict[str, object] = {
            "parent": self.parent,
            "agent": self.agent,
            "prompt": self.prompt,
            "createdAt": self.created_ms,
            "status": self.status,
        }
        if self.source is not None:
            obj["source"] = self.source
        return obj


class NotATask(ValueError):
    """``task_id`` does not name a descendant of the asking workspace (the message says why,
    in words the model can act on)."""


def child_id(parent_id: str, n: int) -> str:
    """The id of the parent's ``n``-th task: ``<parent>.t<n>``, within the 64-character id
    limit (a long parent id keeps its head and a hash of the whole)."""
    suffix = f".t{n}"
    if len(parent_id) + len(suffix) <= _MAX_ID:
        return parent_id + suffix
    digest = hashlib.sha256(parent_id.encode()).hexdigest()[:8]
    head = parent_id[: _MAX_ID - len(suffix) - len(digest) - 1].rstrip(".")
    return f"{head}-{digest}{suffix}"


def read_link(layout: Layout) -> TaskLink | None:
    """The link of ``layout``'s workspace, or None when it is not a child (or the file is
    unreadable or malformed: such a workspace is nobody's child)."""
    value = read_json_object(layout.session_dir / TASK_FILE, max_size=_MAX_LINK_FILE)
    if value is None:
        return None
    parent, agent = value.get("parent"), value.get("agent")
    if not isinstance(parent, str) or not isinstance(agent, str):
        return None
    try:
        validate_workspace_id(parent)
    except InvalidWorkspaceId:
        return None
    prompt, created, status = value.get("prompt"), value.get("createdAt"), value.get("status")
    source = value.get("source")
    return TaskLink(
        parent=parent,
        agent=agent,
        prompt=prompt if isinstance(prompt, str) else "",
        created_ms=created if isinstance(created, int) and not isinstance(created, bool) else None,
        status=status if isinstance(status, str) else None,
        source=({str(k): v for k, v in source.items() if isinstance(v, str)}
                if isinstance(source, dict) else None),
    )


def _write_link(layout: Layout, link: TaskLink) -> None:
    path = layout.session_dir / TASK_FILE
    data = json.dumps(link.to_obj(), ensure_ascii=False).encode("utf-8", "surrogatepass")
    try:
        atomic_write(path, data + b"\n")
    except OSError as exc:
        raise file_error(exc, path, "write") from None


def depth(home: Path, workspace_id: str) -> int:
    """How many ancestors ``workspace_id`` has (0: a top-level workspace)."""
    n = 0
    current = read_link(Layout(home, workspace_id))
    while current is not None and n < _MAX_WALK:
        n += 1
        current = read_link(Layout(home, current.parent))
    return n


def create_child(
    home: Path,
    parent_id: str,
    *,
    agent: str,
    prompt: str,
    now_ms: int | None,
    status: str = "running",
    source: dict[str, str] | None = None,
) -> Layout:
    """Claim the next free child id of ``parent_id`` and write its link."""
    sessions = home / "sessions"
    try:
        sessions.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise file_error(exc, sessions, "create") from None
    n = 1
    while True:
        layout = Layout(home, child_id(parent_id, n))
        try:
            os.mkdir(layout.session_dir)
        except FileExistsError:
            n += 1
            continue
        except OSError as exc:
            raise file_error(exc, layout.session_dir, "create") from None
        link = TaskLink(parent_id, agent, prompt[:_PROMPT_CHARS], now_ms, status, source)
        _write_link(layout, link)
        return layout


def finish_child(layout: Layout, status: str) -> None:
    """Record how the child's task ended (its transcript already says what it did)."""
    link = read_link(layout)
    if link is not None:
        _write_link(layout, dataclasses.replace(link, status=status))


def descendant(home: Path, ancestor_id: str, task_id: object) -> Layout:
    """The layout of ``task_id`` when it is a descendant of ``ancestor_id``; else
    :class:`NotATask` saying why."""
    if not isinstance(task_id, str):
        raise NotATask("task_id must be a string: the taskId a task call returned")
    try:
        validate_workspace_id(task_id)
    except InvalidWorkspaceId:
        raise NotATask(
            f"task_id {task_id[:80]!r} is not a task id (the taskId a task call returned, "
            "such as ws.t1)"
        ) from None
    if task_id == ancestor_id:
        raise NotATask("task_id names this workspace itself: leave task_id out to read it")
    layout = Layout(home, task_id)
    current, walked = read_link(layout), 0
    while current is not None and walked < _MAX_WALK:
        if current.parent == ancestor_id:
            return layout
        walked += 1
        current = read_link(Layout(home, current.parent))
    raise NotATask(
        f"no task {task_id!r} under this workspace: task_id reads the history of a task this "
        "workspace started (or one of theirs), never a parent's or another workspace's"
    )


def children_of(home: Path, parent_id: str, names: Iterable[str] | None = None) -> list[str]:
    """The ids of ``parent_id``'s direct children, in name order (``names``: the workspace
    ids to look among; default every session directory under the home)."""
    if names is None:
        try:
            names = sorted(os.listdir(home / "sessions"))
        except OSError:
            return []
    found: list[str] = []
    for name in names:
        try:
            layout = Layout(home, name)
        except InvalidWorkspaceId:
            continue
        link = read_link(layout)
        if link is not None and link.parent == parent_id:
            found.append(name)
    return found


def descendants(home: Path, parent_id: str) -> list[str]:
    """Every task below ``parent_id``, each listed after its own tasks (deepest first: the
    order to remove them in)."""
    try:
        names = sorted(os.listdir(home / "sessions"))
    except OSError:
        return []
    out: list[str] = []

    def visit(wid: str, level: int) -> None:
        if level > _MAX_WALK:
            return
        for child in children_of(home, wid, names):
            if child not in out:
                visit(child, level + 1)
                out.append(child)

    visit(parent_id, 1)
    return out


def imported_child(home: Path, parent_id: str, source: dict[str, str]) -> Layout | None:
    """The child of ``parent_id`` imported from ``source`` before, if there is one."""
    for wid in children_of(home, parent_id):
        layout = Layout(home, wid)
        link = read_link(layout)
        if link is not None and link.source == source:
            return layout
    return None


def tree_order(parents: Mapping[str, str | None]) -> list[tuple[str, int]]:
    """Workspace ids with their depth, each parent followed by its children (name order at
    every level). ``parents`` maps every id to its parent's id (None: top level); a child
    whose parent is not among the ids, or that sits in a cycle, is listed at the top."""
    kids: dict[str | None, list[str]] = {}
    for wid in sorted(parents):
        parent = parents[wid]
        kids.setdefault(parent if parent in parents else None, []).append(wid)
    out: list[tuple[str, int]] = []
    seen: set[str] = set()

    def visit(wid: str, level: int) -> None:
        if wid in seen:
            return
        seen.add(wid)
        out.append((wid, level))
        for child in kids.get(wid, []):
            visit(child, level + 1)

    for wid in kids.get(None, []):
        visit(wid, 0)
    for wid in sorted(parents):  # a cycle of links: nobody's child reaches it from the top
        visit(wid, 0)
    return out
