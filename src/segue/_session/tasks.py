"""Running a ``task`` call (SPEC.md R41): a child agent in a child workspace of its own.

The child is an ordinary :class:`~segue._session.core.Session`, built by the same factory as
its parent (:func:`segue._session.factory.open_session`) for the workspace
:func:`segue._children.create_child` claims, and sent the prompt once. So everything a
session does, it does in its own transcript: windows, rollovers, the floor, quarantine.

What it takes from its parent:

* the tool policy: the child agent's own rules, narrowed by every layer of the parent's
  (and the parent's write scope), so a child never has a tool its parent lacks;
* the approval gate: the parent's mode, remembered rules and the person asked;
* the model and provider (unless the child's agent names a model of its own), the working
  directory, the settings and the store;
* a cancel flag under the turn's (:meth:`~segue._session.cancel.Cancellation.task`):
  stopping the parent's turn (``segue run``'s Ctrl-C, leaving a stream) stops the child's
  too, and the parent's turn then stops at its own next check; a chat's first Ctrl-C while
  the task runs stops the child alone (R40: its settled steps stay), and the parent's turn
  reads that result and goes on.

The result the parent's model reads is the child's final reply, with the ``taskId`` that
``session_history`` takes as ``task_id`` to read the child's history; a task stopped by the
user says so (``task_stopped``), with what the child had said so far.
"""

from __future__ import annotations

import contextlib
import shutil
import time
from typing import TYPE_CHECKING, Any

from segue._children import MAX_DEPTH, create_child, depth, descendants, finish_child
from segue._errors import SegueError
from segue._events import Event, TaskFinished, TaskStarted
from segue._fsutil import file_error
from segue._history.protocol import TranscriptStore
from segue._policy import resolve_agent
from segue._session.cancel import Cancellation
from segue._session.result import TurnResult
from segue._tools.base import tool_error
from segue._workspace import Layout

if TYPE_CHECKING:
    from segue._session.core import Session
    from segue._session.factory import Recipe

#: Why a task ended when the user stopped it alone (its parent's turn goes on).
STOPPED_BY_USER = "stopped by the user (Ctrl-C); the steps it settled are kept"


class TaskRunner:
    """The :data:`~segue._tools.task.Delegate` of one session's ``task`` tool."""

    def __init__(self, parent: Session, recipe: Recipe, unattended: str) -> None:
        self.parent = parent
        self.recipe = recipe
        self.unattended = unattended

    def __call__(self, agent_name: str, prompt: str) -> dict[str, Any]:
        parent = self.parent
        home = parent.layout.home
        if depth(home, parent.layout.workspace_id) + 1 > MAX_DEPTH:
            return tool_error(
                "not_allowed", f"tasks nest at most {MAX_DEPTH} deep; do this one yourself"
            )
        try:
            agent = resolve_agent(agent_name, self.recipe.workdir)
        except SegueError as exc:
            return tool_error("unknown_agent", exc.message)
        try:
            layout = create_child(home, parent.layout.workspace_id, agent=agent.name,
                                  prompt=prompt, now_ms=time.time_ns() // 1_000_000)
        except SegueError as exc:
            return tool_error("task_failed", f"the task could not start: {exc.message}")
        task_id = layout.workspace_id
        parent.on_event(TaskStarted(task_id, agent.name, prompt))
        status, reason, answer = "error", None, None
        with parent.cancellation.task(task_id, agent.name) as cancellation:
            try:
                answer = self._run(layout, agent.name, prompt, cancellation)
                status, reason = answer.status, answer.reason
            except SegueError as exc:
                reason = exc.message
            finally:
                # The transcript says how it ended; the link only summarizes it.
                with contextlib.suppress(SegueError):
                    finish_child(layout, status)
        # This task's own Ctrl-C: the child stopped, and the parent's turn goes on.
        stopped = cancellation.stopped_alone and status != "completed"
        if stopped:
            reason = STOPPED_BY_USER
        rollovers = answer.rollovers if answer is not None else 0
        parent.on_event(TaskFinished(task_id, agent.name, status, reason, rollovers))
        common: dict[str, Any] = {"taskId": task_id, "agent": agent.name}
        if answer is not None and status == "completed":
            return {"ok": True, **common, "report": answer.text,
                    "windowId": answer.window_id, "rollovers": rollovers}
        if stopped:
            return {
                "ok": False,
                "error": {"code": "task_stopped", "message": _stopped_message(task_id)},
                **common,
                "report": answer.text if answer is not None and answer.text else None,
            }
        return {
            "ok": False,
            "error": {"code": "task_incomplete",
                      "message": f"the task ended {status}: {reason or 'no reason given'}"},
            **common,
            "report": answer.text if answer is not None and answer.text else None,
        }

    def _run(
        self, layout: Layout, agent_name: str, prompt: str, cancellation: Cancellation
    ) -> TurnResult:
        from segue._session.factory import Parent, open_session

        parent, recipe = self.parent, self.recipe
        child = open_session(
            layout,
            workdir=recipe.workdir,
            agent_name=agent_name,
            on_event=_quiet,
            durable=recipe.durable,
            persist_script_position=recipe.persist_script_position,
            store_url=recipe.store_url,
            unattended=self.unattended,
            settings=recipe.settings,
            parent=Parent(recipe.model, parent.provider, parent.policy, recipe.write_scope,
                          parent.approval),
        )
        try:
            with child:
                return child.send(prompt, cancellation=cancellation)
        finally:
            _close_store(child.store)


def _stopped_message(task_id: str) -> str:
    return (f"the user stopped this task (Ctrl-C) before it finished; the steps it settled "
            f"are kept: session_history with task_id {task_id!r} reads them")


def _close_store(store: TranscriptStore) -> None:
    """A PostgreSQL store holds a connection; the JSONL store holds nothing between calls."""
    store.close()


def _quiet(_event: Event) -> None:
    """A child's own events stay its own: the parent shows it start and end."""


def clear_tasks(layout: Layout, store: TranscriptStore) -> int:
    """A hard clear of ``layout``'s workspace destroys the tasks it ran too (their
    transcripts, then their workspaces, so their ids are free again), deepest first, each
    in a store of the parent's kind. Returns how many were removed."""
    from segue._providers.scripted import forget_positions

    removed = 0
    for wid in descendants(layout.home, layout.workspace_id):
        child = Layout(layout.home, wid)
        child_store = store.sibling(wid)
        try:
            child_store.clear_all()
        finally:
            _close_store(child_store)
        forget_positions(child.script_positions)
        try:
            shutil.rmtree(child.session_dir)
        except OSError as exc:
            raise file_error(exc, child.session_dir, "remove") from None
        removed += 1
    return removed
