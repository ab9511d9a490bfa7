"""The bounded scan of the JSONL files (R24): the look-back backend every other one must agree
with.

Each call is one page read with the store's shared cross-process lock held (R30): a snapshot
of receipt and stamps before the page and again after it; any difference means something
wrote without the lock while we read, and the page is dropped (``history_changed``).
Recovery never runs here: a reader does not repair. A first page under an untrusted receipt
(missing, pending, corrupt, mismatched) proceeds from a fresh baseline of what the store's
visibility rule says is readable; its cursor then accepts no growth at all (see
snapshot.py), so any later change, even a verified append, expires it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import msgspec

from segue._errors import FileError, LockTimeout
from segue._fsutil import describe_os_error
from segue._history.store import HistoryStore
from segue._retrieval import pages, pages_order, pages_read
from segue._retrieval.cursor import CursorState
from segue._retrieval.cursor import snapshot_of as cursor_snapshot
from segue._retrieval.reader import HistoryMoved
from segue._retrieval.snapshot import Snapshot, continuation_ok, take
from segue._workspace import Layout

if TYPE_CHECKING:
    from segue._retrieval.schema import Request
    from segue._views.windows import Hit

LOCK_TIMEOUT = 10.0

PageFn = Callable[[pages.Ctx, CursorState | None], pages.Page]

#: the bounded scan's page per (action, newest first)
PAGES: dict[tuple[str, bool], PageFn] = {
    ("list_windows", True): pages.list_windows,
    ("list_windows", False): pages_order.list_windows_oldest,
    ("list_items", True): pages_order.list_items_newest,
    ("list_items", False): pages.list_items,
    ("search", True): pages.search,
    ("search", False): pages_order.search_oldest,
    ("read_item", True): pages_read.read_item,
    ("read_item", False): pages_read.read_item,
}


def scan_page(ctx: pages.Ctx, state: CursorState | None) -> pages.Page:
    """The bounded scan's page for ``ctx.req``."""
    return PAGES[ctx.req.action, ctx.req.newest_first](ctx, state)


class FileView:
    """One call's view of the JSONL files, under the store's shared lock."""

    def __init__(self, backend: ScanBackend, snap: Snapshot) -> None:
        self.backend = backend
        self.layout = backend.layout
        self.snap = snap

    def continues(self, state: CursorState) -> bool:
        return continuation_ok(cursor_snapshot(state), self.snap)

    def appended(self, ctx: pages.Ctx, state: CursorState) -> tuple[CursorState, bool, bool]:
        return pages.check_appended(ctx, state)

    def page(self, ctx: pages.Ctx, state: CursorState | None) -> pages.Page:
        return self.backend.page(ctx, state)

    def confirm(self) -> None:
        if take(self.layout) != self.snap:
            raise HistoryMoved(self.layout.chat)


class ScanBackend:
    """Every page read from the files within R24's bounds."""

    def __init__(self, layout: Layout, *, lock_timeout: float = LOCK_TIMEOUT) -> None:
        self.layout = layout
        self.workspace_id = layout.workspace_id
        self.store = HistoryStore(layout, lock_timeout=lock_timeout)
        self.index_problem: str | None = None

    @contextmanager
    def view(self, req: Request | None = None) -> Iterator[FileView]:
        self.index_problem = None
        try:
            with self.store.read_locked():  # shared: pages never change the files (R30)
                yield FileView(self, take(self.layout))
        except LockTimeout as exc:
            raise pages.PageFailure("history_timeout", exc.message) from None
        except FileError as exc:
            # A transcript file that is not a regular file, or cannot be read: nothing is
            # answered from around it (a floor could be in it).
            raise pages.PageFailure("history_changed", exc.message) from None
        except (HistoryMoved, FileNotFoundError):
            raise pages.PageFailure(
                "history_changed", "the transcript changed while it was read; call again"
            ) from None
        except OSError as exc:  # no access, an I/O error: the files, not the model
            raise pages.PageFailure("history_changed", describe_os_error(exc)) from None

    def page(self, ctx: pages.Ctx, state: CursorState | None) -> pages.Page:
        if state is not None and state.phase == "ix":
            state = scan_state(state)
        return scan_page(ctx, state)

    def after_call(self) -> None:
        return None

    def people_search(self, query: str, *, context: int = 60) -> Iterable[Hit] | None:
        return None

    def people_words(self, query: str, *, context: int = 60) -> Iterator[Hit]:
        from segue._retrieval.people_words import words_search

        return words_search(self.store.entries, query, context=context)


def scan_state(state: CursorState) -> CursorState:
    """An index cursor's place as the bounded scan's cursor (the index is behind, locked,
    damaged or not used on this call). The scan reads newest first from there and stops at
    the first floor it meets, or reads forward from a place above the newest floor (new
    floors in appended bytes were checked before), so nothing below the floor is read."""
    if state.scan is None:
        raise pages.PageFailure("stale_cursor", "this cursor needs the history index")
    return msgspec.structs.replace(state.scan, ce=state.ce, cs=state.cs, cm=state.cm)
