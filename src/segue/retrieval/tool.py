"""``session_history``: the tool object the registry and ``segue history tool`` call.

Each call is one bounded page (R24), run with the store's cross-process lock held (R30):

1. validate the arguments, then the cursor (signature, workspace, action, binding);
2. take the lock (bounded wait: ``history_timeout``) and a snapshot of receipt and stamps;
3. a cursor must pass :func:`segue.retrieval.snapshot.continuation_ok` (else ``stale_cursor``),
   then the bytes appended since its last page are checked for a new floor;
4. read the page; take the snapshot again: any difference means something wrote without the
   lock while we read, and the page is dropped (``history_changed``).

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
from segue.retrieval import envelope, pages
from segue.retrieval.cursor import CursorError, CursorState, binding, decode, encode, with_snapshot
from segue.retrieval.cursor import snapshot_of as cursor_snapshot
from segue.retrieval.reader import Budget, HistoryMoved
from segue.retrieval.schema import DESCRIPTION, TOOL_SCHEMA, ArgumentError, Request, parse
from segue.retrieval.snapshot import Snapshot, continuation_ok, take
from segue.workspace import Layout

MAX_SCAN_BYTES = 2 * 1024 * 1024
MAX_SCAN_ROWS = 500
LOCK_TIMEOUT = 10.0

_PAGES = {
    "list_windows": pages.list_windows,
    "list_items": pages.list_items,
    "search": pages.search,
    "read_item": pages.read_item,
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
    ) -> None:
        self.layout = layout
        self.store = HistoryStore(layout, lock_timeout=lock_timeout)
        self.max_bytes = max_bytes
        self.max_rows = max_rows

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

    def _cursor(self, req: Request) -> CursorState | None:
        if req.cursor is None:
            return None
        state = decode(req.cursor)
        if state.ws != self.layout.workspace_id:
            raise CursorError("invalid_cursor", "cursor belongs to another workspace")
        if state.act != req.action or state.bind != binding(req.action, req.key):
            raise CursorError(
                "invalid_cursor", "cursor belongs to another action or query; start without it"
            )
        return state

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
                page = _PAGES[req.action](ctx, checked)
        else:
            page = _PAGES[req.action](ctx, None)
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


def _base_state(
    workspace: str, req: Request, snap: Snapshot, prior: CursorState | None
) -> CursorState:
    """Binding, snapshot and appended-check progress for the next cursor; the page fills in
    its position fields."""
    return CursorState(
        ws=workspace,
        act=req.action,
        bind=binding(req.action, req.key),
        **with_snapshot(snap),
        ce=prior.ce if prior is not None else snap.chat_size,
        cs=prior.cs if prior is not None else None,
        cm=prior.cm if prior is not None else False,
        phase="back",
        pos=0,
    )
