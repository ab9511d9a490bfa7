"""Where look-back search happens: one :class:`Backend` protocol, three implementations, and
the one function that picks among them.

Every look-back goes through here — the model's ``session_history`` tool
(:mod:`segue._tools.builtin`), a person's ``segue history search`` / ``history tool``
(:mod:`segue._cli.history`, :mod:`segue._cli.quick_search`, :mod:`segue.api._history`) and
``segue mcp serve`` — so the three answer alike.

* :mod:`~segue._retrieval.backends.scan` — the bounded scan of the JSONL files (R24): the
  reference every other backend must agree with;
* :mod:`~segue._retrieval.backends.sqlite_index` — the history index (R35, SPEC.md §7): the
  same pages from ``history-index.sqlite`` when it is trusted, the scan's otherwise;
* :mod:`segue.postgres._backend` — the PostgreSQL store (SPEC.md §8), in SQL: the store
  offers it (``lookback_backend()``), so this package never imports the SQL code.

A person's ``history search --words`` (every window, no floor) is ranked alike by every
backend (:class:`segue._retrieval.people_words.Tally`): the history index
(:mod:`segue._retrieval.index_people_words`) and PostgreSQL (:mod:`segue.postgres._people_words`)
read only the items holding a query term; the scan walks every row in bounded passes.

What is the same for all of them — arguments, cursors, the envelope and its 16 KiB bound,
the stale-cursor and new-floor checks of a continuation (R26) — is written once, in
:class:`segue._retrieval.tool.SessionHistoryTool`. A backend only says how one call sees the
history (:class:`View`): a consistent snapshot, whether a cursor may go on, whether rows
appended since its last page hold a new floor, and the page itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Protocol

from segue._retrieval.cursor import CursorState
from segue._retrieval.snapshot import Snapshot
from segue._workspace import Layout

if TYPE_CHECKING:
    from segue._history.protocol import TranscriptStore
    from segue._retrieval.pages import Ctx, Page
    from segue._retrieval.schema import Request
    from segue._retrieval.tool import SessionHistoryTool
    from segue._views.windows import Hit


class View(Protocol):
    """One call's consistent view of the history (held until the page is answered)."""

    #: the history as of the start of the call
    snap: Snapshot
    #: what the page code reads (the JSONL files; a placeholder for PostgreSQL)
    layout: Layout

    def continues(self, state: CursorState) -> bool:
        """Whether a cursor issued earlier may go on in this snapshot (R26)."""

    def appended(self, ctx: Ctx, state: CursorState) -> tuple[CursorState, bool, bool]:
        """Check what was appended since ``state``'s last page for a new floor: (state with
        that progress, a floor found, the check complete within this call's budget)."""

    def page(self, ctx: Ctx, state: CursorState | None) -> Page:
        """One bounded page of ``ctx.req`` from ``state`` (None: the first page)."""

    def confirm(self) -> None:
        """Raise when the history changed under the call (the page is then dropped)."""


class Backend(Protocol):
    """How one workspace's history is read for look-back."""

    workspace_id: str
    #: why the last call did not answer from an index (None: it did, or has none)
    index_problem: str | None

    def view(self, req: Request | None = None) -> AbstractContextManager[View]:
        """One call's view (``req``: the call's request, which a backend may start reading
        for as it opens the view). Failures of the store come out as
        :class:`segue._retrieval.pages.PageFailure` with the tool's error code."""

    def after_call(self) -> None:
        """Work done after the answer, outside any lock (one bounded index rebuild step)."""

    def people_search(self, query: str, *, context: int = 60) -> Iterable[Hit] | None:
        """A person's ``history search`` over the whole transcript (no floor, no bounds)
        answered from an index, or None: no index can answer it now (read the rows)."""

    def people_words(self, query: str, *, context: int = 60) -> Iterator[Hit]:
        """A person's ``history search --words`` over the whole transcript (no floor, no
        bounds), best first, in bounded memory (:mod:`segue._retrieval.people_words`);
        UsageError at once for a query without words."""


def pick_backend(
    layout: Layout,
    store: TranscriptStore | None = None,
    *,
    use_index: bool = True,
    build_index: bool = True,
    lock_timeout: float | None = None,
    background: bool = False,
) -> Backend:
    """The backend for ``layout``'s workspace held in ``store`` (None: the JSONL files).

    ``use_index``: answer from the history index when it is trusted; ``build_index``: catch
    it up and rebuild it when it is not (for PostgreSQL: derive rows again when another
    version derived them); without it nothing is written. ``background``: a process that
    lives on rebuilds the index in a child process between calls (index_builder.py)."""
    own = getattr(store, "lookback_backend", None)
    if callable(own):  # a store that answers look-back itself (PostgreSQL, in SQL)
        backend: Backend = own(rederive=build_index)
        return backend
    from segue._retrieval.backends.scan import LOCK_TIMEOUT, ScanBackend

    timeout = LOCK_TIMEOUT if lock_timeout is None else lock_timeout
    if not use_index:
        return ScanBackend(layout, lock_timeout=timeout)
    from segue._retrieval.backends.sqlite_index import IndexBackend

    return IndexBackend(
        layout, lock_timeout=timeout, build_index=build_index, background=background
    )


def lookback_tool(
    layout: Layout, store: TranscriptStore | None = None, *, build_index: bool = True
) -> SessionHistoryTool:
    """``session_history`` over the backend :func:`pick_backend` picks, for a process that
    lives on (a session, ``segue mcp serve``): an untrusted index is rebuilt between calls."""
    from segue._retrieval.task_scope import task_backends
    from segue._retrieval.tool import SessionHistoryTool

    backend = pick_backend(layout, store, build_index=build_index, background=build_index)
    tool = SessionHistoryTool.over(backend)
    tool.tasks = task_backends(layout, store, build_index=build_index)  # R41: task_id
    return tool


__all__ = ["Backend", "View", "lookback_tool", "pick_backend"]
