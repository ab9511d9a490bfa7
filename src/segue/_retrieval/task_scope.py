"""``task_id`` (SPEC.md R41): which workspace's history a ``session_history`` call reads.

A call with ``task_id`` reads a descendant task's own transcript through the very backend
:func:`segue._retrieval.backends.pick_backend` picks for that workspace, so every rule of the
tool (the child's own floor, bounds, projection, cursors, the index) holds there as it does
for the caller's history. Cursors are bound to the workspace they were issued in, so a page
of one history never continues in another. Only descendants are reachable
(:func:`segue._children.descendant`): the link is checked again on every call.

The floor of every workspace on the way down holds too (R11): a task is reachable only while
the ``task`` call that started it is above its parent's privacy floor, so a ``/clear --soft``
in the parent also hides the tasks it ran before the clear. Whether the call is there is
asked of the parent's own ``session_history`` (a literal search for the task's id in the
``task`` results), with its bounds: a few pages at most.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import TYPE_CHECKING

from segue._children import NotATask, descendant, read_link
from segue._retrieval.schema import ArgumentError
from segue._workspace import Layout

if TYPE_CHECKING:
    from segue._history.protocol import TranscriptStore
    from segue._retrieval.backends import Backend


def task_backends(
    layout: Layout, store: TranscriptStore | None, *, build_index: bool = True
) -> Callable[[str], Backend]:
    """``task_id`` → the backend of that descendant of ``layout``'s workspace (kept for the
    tool's life, so an index it trusts stays trusted); :class:`ArgumentError` otherwise."""
    opened: dict[str, Backend] = {}

    def backend_of(workspace: Layout) -> Backend:
        found = opened.get(workspace.workspace_id)
        if found is None:
            from segue._retrieval.backends import pick_backend

            found = pick_backend(workspace, _store_of(workspace, store), build_index=build_index)
            opened[workspace.workspace_id] = found
        return found

    def backend(task_id: str) -> Backend:
        try:
            child = descendant(layout.home, layout.workspace_id, task_id)
        except NotATask as exc:
            raise ArgumentError("invalid_argument", str(exc)) from None
        # Down the chain, each task's call must be above its parent's floor.
        hops: list[Layout] = [child]
        while hops[-1].workspace_id != layout.workspace_id:
            link = read_link(hops[-1])
            if link is None:  # removed since descendant() walked it
                raise ArgumentError("invalid_argument", f"task {task_id!r} is gone")
            hops.append(Layout(layout.home, link.parent))
        for below, above in itertools.pairwise(hops):
            if not _started_above_floor(backend_of(above), below.workspace_id):
                raise ArgumentError(
                    "invalid_argument",
                    f"task {below.workspace_id!r} was started before the newest reset of "
                    f"{above.workspace_id!r} (/clear --soft): its history is cleared too",
                )
        return backend_of(child)

    return backend


#: How many pages of the parent's history a task's call is looked for in (the index answers
#: in one; the bounded scan reads 500 rows a page).
_PAGES = 8


def _started_above_floor(parent: Backend, task_id: str) -> bool:
    """Whether ``parent``'s history above its floor holds the ``task`` result naming
    ``task_id`` (results are compact JSON: the closing quote keeps ``.t1`` from ``.t10``)."""
    from segue._retrieval.tool import SessionHistoryTool

    tool = SessionHistoryTool.over(parent)
    args: dict[str, object] = {"action": "search", "query": f'"taskId":"{task_id}"',
                               "match": "literal", "tool_name": "task", "limit": 1}
    for _page in range(_PAGES):
        result = tool.call(args)
        if not result.get("ok"):
            return False
        if result.get("items"):
            return True
        cursor = result.get("nextCursor")
        if not isinstance(cursor, str):
            return False
        args["cursor"] = cursor
    return False


def _store_of(child: Layout, parent: TranscriptStore | None) -> TranscriptStore | None:
    """The child's store, kept where its parent's is (None: the JSONL files)."""
    # a store that is not the JSONL files (PostgreSQL) opens the child's workspace itself
    sibling = getattr(parent, "sibling", None)
    if callable(sibling):
        store: TranscriptStore = sibling(child.workspace_id)
        return store
    return None
