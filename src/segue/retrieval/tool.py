"""``session_history``: the tool object the registry and ``segue history tool`` call.

Each call is one bounded page (R24), run with the store's cross-process lock held (R30):

1. validate the arguments, then the cursor (signature, workspace, action, binding);
2. take the lock (bounded wait: ``history_timeout``) and a snapshot of receipt and stamps;
3. a cursor must pass :func:`segue.retrieval.snapshot.continuation_ok` (else ``stale_cursor``),
   then the bytes appended since its last page are checked for a new floor;
4. read the page; take the snapshot again: any difference means something wrote without the
   lock while we read, and the page is dropped (``history_changed``).

With the history index (R35, :mod:`~segue.retrieval.index_pages`), step 4 reads the page
from the index when it is trusted (checked and caught up under the same lock); otherwise
that call reads the bounded scan, and after the lock is released one bounded step of
rebuilding the index runs (``build_index``, :mod:`~segue.retrieval.index_steps`), so calls
are fast again once a step completes it. Both paths answer the same. A cursor issued by an
index page also holds its place as a scan cursor, so a next page that cannot use the index
(behind, locked by another reader's catch-up, damaged, rebuilt) goes on with the scan: only
what expires any cursor expires it (R26).

Recovery never runs here: a reader does not repair. A first page under an untrusted receipt
(missing, pending, corrupt, mismatched) proceeds from a fresh baseline of what the store's
visibility rule says is readable; its cursor then accepts no growth at all (see
snapshot.py), so any later change, even a verified append, expires it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from segue.errors import FileError, LockTimeout
from segue.fsutil import describe_os_error
from segue.history.store import HistoryStore
from segue.retrieval import envelope, pages, pages_order
from segue.retrieval.cursor import (
    CursorError,
    CursorState,
    binding,
    encode,
    request_state,
    with_snapshot,
)
from segue.retrieval.cursor import snapshot_of as cursor_snapshot
from segue.retrieval.reader import Budget, HistoryMoved
from segue.retrieval.schema import DESCRIPTION, TOOL_SCHEMA, ArgumentError, Request, parse
from segue.retrieval.snapshot import Snapshot, continuation_ok, take
from segue.workspace import Layout

MAX_SCAN_BYTES = 2 * 1024 * 1024
MAX_SCAN_ROWS = 500
LOCK_TIMEOUT = 10.0

#: the bounded scan's page per (action, newest first)
_PAGES = {
    ("list_windows", True): pages.list_windows,
    ("list_windows", False): pages_order.list_windows_oldest,
    ("list_items", True): pages_order.list_items_newest,
    ("list_items", False): pages.list_items,
    ("search", True): pages.search,
    ("search", False): pages_order.search_oldest,
    ("read_item", True): pages.read_item,
    ("read_item", False): pages.read_item,
}


class SessionHistoryTool:
    """The ``session_history`` tool for one workspace. Thread-compatible, not thread-safe."""

    name = "session_history"
    read_only = True
    description = DESCRIPTION

    def __init__(
        self,
        layout: Layout,
        *,
        lock_timeout: float = LOCK_TIMEOUT,
        max_bytes: int = MAX_SCAN_BYTES,
        max_rows: int = MAX_SCAN_ROWS,
        use_index: bool = True,
        build_index: bool = True,
    ) -> None:
        """``use_index``: answer from the history index when it is trusted (else every call
        scans). ``build_index``: catch the index up and rebuild it when it is not trusted;
        without it the index is only read, never created or written."""
        self.layout = layout
        self.store = HistoryStore(layout, lock_timeout=lock_timeout)
        self.max_bytes = max_bytes
        self.max_rows = max_rows
        self.use_index = use_index
        self.build_index = build_index
        #: why the last call did not use the index (None: it did, or it was not asked to)
        self.index_problem: str | None = None
        self._rebuild = False

    @property
    def schema(self) -> Mapping[str, Any]:
        return TOOL_SCHEMA

    def run(self, args: Mapping[str, Any]) -> dict[str, Any]:
        return self.call(args)

    def call(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """Answer one call; never raises for anything the model or the files can cause."""
        try:
            req = parse(args)
            state = self._cursor(req)
        except (ArgumentError, CursorError) as exc:
            return envelope.error(exc.code, exc.message)
        self._rebuild = False
        self.index_problem = None
        try:
            with self.store.read_locked():  # shared: pages never change the files (R30)
                return self._page(req, state)
        except LockTimeout as exc:
            return envelope.error("history_timeout", exc.message)
        except FileError as exc:
            # A transcript file that is not a regular file, or cannot be read: nothing is
            # answered from around it (a floor could be in it).
            return envelope.error("history_changed", exc.message)
        except pages.PageFailure as exc:
            return envelope.error(exc.code, exc.message)
        except (HistoryMoved, FileNotFoundError):
            return envelope.error(
                "history_changed", "the transcript changed while it was read; call again"
            )
        except OSError as exc:  # no access, an I/O error: the files, not the model
            return envelope.error("history_changed", describe_os_error(exc))
        finally:
            if self._rebuild:
                self._rebuild_index()

    def _rebuild_index(self) -> None:
        # Outside the store lock, one bounded step per call (index_steps.py): the answer
        # came from the scan, and a whole rebuild must stall neither this call nor writers.
        from segue.retrieval.index_build import NotBuilt
        from segue.retrieval.index_steps import build_step

        try:
            if build_step(self.layout) is None:
                self.index_problem = f"{self.index_problem}; rebuilding (one step per call)"
        except NotBuilt as exc:
            self.index_problem = f"{self.index_problem}; not rebuilt: {exc}"
        except OSError as exc:  # the side file cannot be put in place: the answer stands
            self.index_problem = f"{self.index_problem}; not rebuilt: {describe_os_error(exc)}"

    def _cursor(self, req: Request) -> CursorState | None:
        return request_state(
            req.cursor, workspace_id=self.layout.workspace_id, action=req.action, bound=req.bound
        )

    def _page(self, req: Request, state: CursorState | None) -> dict[str, Any]:
        before = take(self.layout)
        budget = Budget(self.max_bytes, self.max_rows)
        if state is not None and not continuation_ok(cursor_snapshot(state), before):
            raise pages.PageFailure(
                "stale_cursor",
                "the transcript was rewritten, rotated or changed outside segue since this "
                "cursor was issued; start a new query",
            )
        base = _base_state(self.layout.workspace_id, req, before, state)
        ctx = pages.Ctx(self.layout, before, budget, req, base)
        key = pages.entries_key(req.action)
        page: pages.Page
        if state is not None:
            checked, new_floor, complete = pages.check_appended(ctx, state)
            ctx.base = _base_state(self.layout.workspace_id, req, before, checked)
            if new_floor:
                if req.action == "read_item":
                    raise pages.PageFailure("item_not_found", "a newer reset now hides this item")
                page = pages.Page([], None, pages.NOTE_FLOOR)
            elif not complete:
                page = pages.Page(
                    [], msgspec.structs.replace(checked, **with_snapshot(before)), pages.NOTE_MORE
                )
            else:
                page = self._answer(ctx, checked)
        else:
            page = self._answer(ctx, None)
        after = take(self.layout)
        if after != before:
            raise HistoryMoved(self.layout.chat)
        result = envelope.success(
            req.action,
            key,
            entries=page.entries,
            next_cursor=encode(page.state) if page.state is not None else None,
            scanned_bytes=budget.bytes,
            scanned_rows=budget.rows,
            note=page.note,
        )
        return envelope.finish(result)

    def _answer(self, ctx: pages.Ctx, state: CursorState | None) -> pages.Page:
        # The index modules (and sqlite3) load on the first call, not with the command line.
        from segue.retrieval.index_file import IndexBehind, IndexUnusable
        from segue.retrieval.index_pages import IndexMismatch

        indexed = state is not None and state.phase == "ix"
        if self.use_index and (state is None or indexed):
            try:
                return self._indexed(ctx, state)
            except (IndexUnusable, IndexMismatch) as exc:
                self.index_problem = str(exc)
                self._rebuild = self.build_index and not isinstance(exc, IndexBehind)
                if self._rebuild and isinstance(exc, IndexMismatch):
                    _distrust(self.layout)  # not used again while it is rebuilt
                ctx.used = envelope.base_size(ctx.req.action, pages.entries_key(ctx.req.action))
        if state is not None and indexed:
            state = _scan_state(state)
        return _PAGES[ctx.req.action, ctx.req.newest_first](ctx, state)

    def _indexed(self, ctx: pages.Ctx, state: CursorState | None) -> pages.Page:
        import sqlite3

        from segue.retrieval import index_pages
        from segue.retrieval.index_file import IndexUnusable, stream_in_progress

        write = self.build_index and not stream_in_progress(self.layout)
        ix = index_pages.open_for_call(self.layout, ctx.snap, write=write)
        try:
            return index_pages.ACTIONS[ctx.req.action](ctx, ix, state)
        except sqlite3.Error as exc:  # a page of the file is damaged
            raise IndexUnusable(f"index unreadable: {exc}") from None
        finally:
            ix.conn.close()


def _distrust(layout: Layout) -> None:
    """Remove an index that disagrees with the transcript (a process that has it open keeps
    its copy, and re-reads every row it returns)."""
    import contextlib

    from segue.retrieval.index_file import index_path

    with contextlib.suppress(OSError):
        index_path(layout).unlink()


def _scan_state(state: CursorState) -> CursorState:
    """An index cursor's place as the bounded scan's cursor (the index is behind, locked,
    damaged or not used on this call). The scan reads newest first from there and stops at
    the first floor it meets, or reads forward from a place above the newest floor (new
    floors in appended bytes were checked before), so nothing below the floor is read."""
    if state.scan is None:
        raise pages.PageFailure("stale_cursor", "this cursor needs the history index")
    return msgspec.structs.replace(state.scan, ce=state.ce, cs=state.cs, cm=state.cm)


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
