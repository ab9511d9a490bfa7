"""``task_id`` (SPEC.md R41): which workspace's history a ``session_history`` call reads.

A call with ``task_id`` reads a descendant task's own transcript through the very backend
:func:`segue.retrieval.backends.pick_backend` picks for that workspace, so every rule of the
tool (the child's own floor, bounds, projection, cursors, the index) holds there as it does
for the caller's history. Cursors are bound to the workspace they were issued in, so a page
of one history never continues in another. Only descendants are reachable
(:func:`segue.children.descendant`): the link is checked again on every call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from segue.children import NotATask, descendant
from segue.retrieval.schema import ArgumentError
from segue.workspace import Layout

if TYPE_CHECKING:
    from segue.history.protocol import TranscriptStore
    from segue.retrieval.backends import Backend


def task_backends(
    layout: Layout, store: TranscriptStore | None, *, build_index: bool = True
) -> Callable[[str], Backend]:
    """``task_id`` → the backend of that descendant of ``layout``'s workspace (kept for the
    tool's life, so an index it trusts stays trusted); :class:`ArgumentError` otherwise."""
    opened: dict[str, Backend] = {}

    def backend(task_id: str) -> Backend:
        try:
            child = descendant(layout.home, layout.workspace_id, task_id)
        except NotATask as exc:
            raise ArgumentError("invalid_argument", str(exc)) from None
        found = opened.get(child.workspace_id)
        if found is None:
            from segue.retrieval.backends import pick_backend

            found = pick_backend(child, _store_of(child, store), build_index=build_index)
            opened[child.workspace_id] = found
        return found

    return backend


def _store_of(child: Layout, parent: TranscriptStore | None) -> TranscriptStore | None:
    """The child's store, kept where its parent's is (None: the JSONL files)."""
    from segue.history.postgres import PostgresStore

    if isinstance(parent, PostgresStore):
        return PostgresStore(parent.url, child.workspace_id)
    return None
