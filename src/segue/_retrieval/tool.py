"""``session_history``: the one tool object the registry, ``segue history tool`` and
``segue mcp serve`` call, over whichever backend :func:`segue._retrieval.backends.pick_backend`
picked (the bounded scan, the SQLite history index or PostgreSQL).

What every backend shares is written here once. Each call is one bounded page (R24):

1. validate the arguments, then the cursor (signature, workspace, action, binding);
2. open the backend's view of the history (a lock and a snapshot, or a transaction);
3. a cursor must still continue in that view (else ``stale_cursor``), then what was
   appended since its last page is checked for a new floor (R26): a floor ends the query;
4. read the page; the backend confirms nothing moved under it (else ``history_changed``);
5. the envelope, within 16 KiB; then the backend's work after the answer (an index
   rebuild step), outside any lock.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import msgspec

from segue._retrieval import envelope, pages
from segue._retrieval.cursor import (
    CursorError,
    CursorState,
    binding,
    encode,
    request_state,
    with_snapshot,
)
from segue._retrieval.reader import Budget
from segue._retrieval.schema import DESCRIPTION, TOOL_SCHEMA, ArgumentError, Request, parse
from segue._retrieval.snapshot import Snapshot
from segue._workspace import Layout

if TYPE_CHECKING:
    from segue._retrieval.backends import Backend, View

MAX_SCAN_BYTES = 2 * 1024 * 1024
MAX_SCAN_ROWS = 500
LOCK_TIMEOUT = 10.0

_STALE = (
    "the transcript was rewritten, rotated or changed outside segue since this cursor was "
    "issued; start a new query"
)


class SessionHistoryTool:
    """The ``session_history`` tool for one workspace. Thread-compatible, not thread-safe.

    ``SessionHistoryTool(layout, …)`` reads the JSONL files (the index when ``use_index``);
    :meth:`over` takes any backend."""

    name = "session_history"
    read_only = True
    description = DESCRIPTION
    #: R41: ``task_id`` → that descendant's backend (:mod:`segue._children`); None: no tasks
    tasks: Callable[[str], Backend] | None = None

    def __init__(
        self,
        layout: Layout,
        *,
        lock_timeout: float = LOCK_TIMEOUT,
        max_bytes: int = MAX_SCAN_BYTES,
        max_rows: int = MAX_SCAN_ROWS,
        use_index: bool = True,
        build_index: bool = True,
        background: bool = False,
    ) -> None:
        """``use_index``: answer from the history index when it is trusted (else every call
        scans). ``build_index``: catch the index up and rebuild it when it is not trusted;
        without it the index is only read, never created or written. ``background``: rebuild
        it in a thread between calls (a process that lives on), not one step per call."""
        from segue._retrieval.backends import pick_backend

        backend = pick_backend(
            layout,
            None,
            use_index=use_index,
            build_index=build_index,
            lock_timeout=lock_timeout,
            background=background,
        )
        self._setup(backend, max_bytes, max_rows)

    @classmethod
    def over(
        cls, backend: Backend, *, max_bytes: int = MAX_SCAN_BYTES, max_rows: int = MAX_SCAN_ROWS
    ) -> SessionHistoryTool:
        tool = cls.__new__(cls)
        tool._setup(backend, max_bytes, max_rows)
        return tool

    def _setup(self, backend: Backend, max_bytes: int, max_rows: int) -> None:
        self.backend = backend
        self.max_bytes = max_bytes
        self.max_rows = max_rows

    @property
    def index_problem(self) -> str | None:
        """Why the last call did not use the index (None: it did, or it was not asked to)."""
        return self.backend.index_problem

    @property
    def schema(self) -> Mapping[str, Any]:
        return TOOL_SCHEMA

    def run(self, args: Mapping[str, Any]) -> dict[str, Any]:
        return self.call(args)

    def call(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """Answer one call; never raises for anything the model or the files can cause."""
        try:
            req = parse(args)
            backend = self._backend_for(req.task_id)
            state = request_state(
                req.cursor,
                workspace_id=backend.workspace_id,
                action=req.action,
                bound=req.bound,
            )
        except (ArgumentError, CursorError) as exc:
            return envelope.error(exc.code, exc.message)
        try:
            with backend.view(req) as view:
                return self._page(backend, view, req, state)
        except pages.PageFailure as exc:
            return envelope.error(exc.code, exc.message)
        finally:
            backend.after_call()

    def _backend_for(self, task_id: str | None) -> Backend:
        """This history's backend, or (R41) a descendant task's, which ``tasks`` finds or
        refuses with an :class:`ArgumentError`."""
        if task_id is None:
            return self.backend
        if self.tasks is None:
            raise ArgumentError("invalid_argument", "task_id: this history has no tasks")
        return self.tasks(task_id)

    def _page(
        self, backend: Backend, view: View, req: Request, state: CursorState | None
    ) -> dict[str, Any]:
        before = view.snap
        budget = Budget(self.max_bytes, self.max_rows)
        if state is not None and not view.continues(state):
            raise pages.PageFailure("stale_cursor", _STALE)
        workspace = backend.workspace_id
        base = _base_state(workspace, req, before, state)
        ctx = pages.Ctx(view.layout, before, budget, req, base)
        page: pages.Page
        if state is not None:
            checked, new_floor, complete = view.appended(ctx, state)
            ctx.base = _base_state(workspace, req, before, checked)
            if new_floor:
                if req.action == "read_item":
                    raise pages.PageFailure("item_not_found", "a newer reset now hides this item")
                page = pages.Page([], None, pages.NOTE_FLOOR)
            elif not complete:
                page = pages.Page(
                    [], msgspec.structs.replace(checked, **with_snapshot(before)), pages.NOTE_MORE
                )
            else:
                page = view.page(ctx, checked)
        else:
            page = view.page(ctx, None)
        # the item's first page (a later call's, where the scan located it then)
        first = state is None or page.near is not None
        if req.action == "read_item" and req.context and page.entries and first:
            from segue._retrieval.neighbours import with_context

            page = with_context(view, ctx, page)
        view.confirm()
        result = envelope.success(
            req.action,
            pages.entries_key(req.action),
            entries=page.entries,
            next_cursor=encode(page.state) if page.state is not None else None,
            scanned_bytes=budget.bytes,
            scanned_rows=budget.rows,
            note=page.note,
        )
        return envelope.finish(result)


def _base_state(
    workspace: str, req: Request, snap: Snapshot, prior: CursorState | None
) -> CursorState:
    """Binding, snapshot and appended-check progress for the next cursor; the page fills in
    its position fields."""
    return CursorState(
        ws=workspace,
        act=req.action,
        bind=binding(req.action, req.bound),
        **with_snapshot(snap),
        ce=prior.ce if prior is not None else snap.chat_size,
        cs=prior.cs if prior is not None else None,
        cm=prior.cm if prior is not None else False,
        phase="back",
        pos=0,
    )
