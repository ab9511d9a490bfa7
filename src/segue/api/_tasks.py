"""A workspace's sub-agent tasks from Python: ``segue.list_tasks`` (SPEC.md R41).

Each task a session's ``task`` tool ran lives in a child workspace of its own. This lists
them, nested tasks included, so a program can find a child and read it: its history with
``segue.open_history(task.task_id)`` (the owner's view), or as the parent's model does,
``open_history(parent).as_model().call({"action": …, "task_id": task.task_id})``.
Only reads: nothing is created or written.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from segue._children import MAX_DEPTH, children_of, read_link
from segue._session.core import Session
from segue._workspace import Layout
from segue.api._where import resolve_layout


@dataclass(frozen=True)
class TaskInfo:
    """One task: its child workspace (``task_id``), whose task it is, the agent that ran it,
    the prompt (its first 500 characters), and how it ended (``running`` while it runs, or
    a turn's status: ``completed``, ``paused``, ``rejected``, ``error``)."""

    task_id: str
    parent: str
    agent: str
    prompt: str
    status: str | None
    created_ms: int | None
    #: 1 for the workspace's own tasks, 2 for theirs, …
    depth: int


def list_tasks(
    workspace: str | Layout | Session | None = None,
    *,
    home: str | os.PathLike[str] | None = None,
    workdir: str | os.PathLike[str] | None = None,
) -> list[TaskInfo]:
    """The tasks of ``workspace`` (an id, a :class:`~segue.Layout` or a
    :class:`~segue.Session`; None: the id derived from ``workdir``), each followed by its
    own tasks, in name order at every level."""
    if isinstance(workspace, Session):
        layout = workspace.layout
    else:
        layout, _ = resolve_layout(workspace, home=home, workdir=workdir)
    try:
        names = sorted(os.listdir(layout.home / "sessions"))
    except OSError:
        return []
    out: list[TaskInfo] = []

    def visit(parent_id: str, level: int) -> None:
        if level > MAX_DEPTH * 4:  # links that loop: stop, as every walk of them does
            return
        for child in children_of(layout.home, parent_id, names):
            link = read_link(Layout(layout.home, child))
            if link is None:
                continue
            out.append(TaskInfo(child, link.parent, link.agent, link.prompt, link.status,
                                link.created_ms, level))
            visit(child, level + 1)

    visit(layout.workspace_id, 1)
    return out


__all__ = ["TaskInfo", "list_tasks"]
