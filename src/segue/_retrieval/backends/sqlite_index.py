"""The history index (R35, SPEC.md §7) as a look-back backend: the scan's pages, answered from
``history-index.sqlite`` when it is trusted.

A call reads the page from the index when it is trusted (checked and caught up under the
same lock as the scan's); otherwise that call reads the bounded scan, and after the lock is
released one step of rebuilding the index runs (:mod:`~segue._retrieval.index_steps`), until
:data:`CALL_SECONDS` after the page began, so calls are fast again once a step completes it.
In a process that lives on (``background``), the call instead starts the rebuild in a child
process that steps on between calls (:mod:`~segue._retrieval.index_builder`); a call that
finds it running lets it work until
:data:`~segue._retrieval.index_builder.WAIT_SECONDS` after the call began, then answers from
the index if it is in place, else from the scan.
An index untrusted only by a recorded one-line rewrite (a failed send's quarantine) is
re-derived at that row first (:mod:`~segue._retrieval.index_rewrites`) and answers the same
call. Both paths answer the same. A cursor issued by an index page also holds its place as
a scan cursor, so a next page that cannot use the index (behind, locked by another reader's
catch-up, damaged, rebuilt) goes on with the scan: only what expires any cursor expires it
(R26); and a scan cursor goes on from the index once it is trusted, where its place maps
(:mod:`~segue._retrieval.index_resume`).
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

import msgspec

from segue._fsutil import describe_os_error
from segue._retrieval import envelope, pages
from segue._retrieval.backends.scan import (
    LOCK_TIMEOUT,
    FileView,
    ScanBackend,
    scan_page,
    scan_state,
)
from segue._retrieval.cursor import CursorState
from segue._workspace import Layout

#: how long a look-back call may take before the rebuild step after it stops (SPEC.md §6: no
#: call over 1 s; the rest is the step's commit and the answer's way out)
CALL_SECONDS = 0.6
#: a call that waits for the builder waits until this long after it began, less twice what
#: the last call's page took (SPEC.md §6: no call over 1 s; a loaded machine's pages vary),
#: at most :data:`~segue._retrieval.index_builder.WAIT_SECONDS`
WAIT_BOUND = 0.8
#: how long after a call began its catch-up of appended bytes may go on reading lines (the
#: rest on the next calls; what it read is still inserted, then the page is answered)
CATCH_UP_SECONDS = 0.35

if TYPE_CHECKING:
    from pathlib import Path

    from segue._retrieval.index_pages import Ix
    from segue._retrieval.schema import Request
    from segue._views.windows import Hit


class IndexBackend(ScanBackend):
    """Pages from the history index when it is trusted, from the scan otherwise."""

    def __init__(
        self,
        layout: Layout,
        *,
        lock_timeout: float = LOCK_TIMEOUT,
        build_index: bool = True,
        background: bool = False,
    ) -> None:
        """``build_index``: catch the index up and rebuild it when it is not trusted; without
        it the index is only read, never created or written. ``background`` (with
        ``build_index``, for a process that lives on): rebuild an untrusted index in a child
        process between calls (index_builder.py) instead of one step after each call; the
        setting ``SEGUE_INDEX_BUILDER=off`` turns it off."""
        super().__init__(layout, lock_timeout=lock_timeout)
        self.build_index = build_index
        self.background = background
        self._rebuild = False
        self._started = 0.0
        self._page_seconds = 0.0  # the last call's page (what a wait must leave time for)
        self._first = True  # no call yet (a short history without an index is built first)
        #: (device, inode) of the index file this call opened (None: not known)
        self._opened: tuple[int, int] | None = None
        if background and build_index:
            _build_if_lost(layout)

    @contextlib.contextmanager
    def view(self, req: Request | None = None) -> Iterator[FileView]:
        self._started = time.monotonic()
        if self._first:
            self._first = False
            self._build_first()
        if self.background and self._page_seconds > 0:
            # before the store lock: writers never wait for it; not before a first page,
            # whose time is not known yet (after_call waits then, knowing it)
            self._wait_for_builder()
        began = time.monotonic()
        try:
            with super().view(req) as view:
                yield view
        finally:
            self._page_seconds = time.monotonic() - began

    def _build_first(self) -> None:
        """A history shorter than :data:`FIRST_BUILD_BYTES` whose index file is missing is indexed
        before its first call answers (one step, in this process, before the store lock:
        about 0.2-0.4 s at most), so that call ranks the whole history, as every later one
        does; the scan would rank only the hits of the page it reads (R39). A reader that
        writes nothing in the workspace (``build_index`` off: ``segue history tool``) builds
        it in a folder of its own (:class:`~segue._retrieval.index_file.PrivateIndex`),
        removed when the backend goes. A step that cannot run leaves the call to the scan;
        ``SEGUE_INDEX_FIRST_BUILD=off`` turns this off."""
        from segue._retrieval.index_build import NotBuilt
        from segue._retrieval.index_file import PrivateIndex, index_path
        from segue._retrieval.index_steps import build_step

        if os.environ.get(FIRST_BUILD_ENV) == "off":
            return
        size = _history_bytes(self.layout)
        if size is None or size >= FIRST_BUILD_BYTES or index_path(self.layout).exists():
            return
        if not self.build_index:
            import shutil
            import tempfile
            import weakref
            from pathlib import Path

            private = Path(tempfile.mkdtemp(prefix="segue-index-"))
            weakref.finalize(self, shutil.rmtree, private, True)
            self.layout = PrivateIndex(self.layout.home, self.layout.workspace_id, private)
            self.build_index = True  # its own folder only
        with contextlib.suppress(NotBuilt, OSError):
            build_step(self.layout, deadline=self._started + CALL_SECONDS)

    def _wait_for_builder(self) -> None:
        """A builder of this process running: let it work for what this call's time allows
        (the index may be in place by then)."""
        from segue._retrieval import index_builder

        left = min(index_builder.WAIT_SECONDS, WAIT_BOUND - 2 * self._page_seconds)
        index_builder.wait(self.layout, self._started + left)

    def page(self, ctx: pages.Ctx, state: CursorState | None) -> pages.Page:
        # The index modules (and sqlite3) load on the first call, not with the command line.
        from segue._retrieval.index_file import IndexBehind, IndexUnusable
        from segue._retrieval.index_pages import IndexMismatch

        self._rebuild = False
        if state is not None and state.phase != "ix":
            # a look-back that began on the scan: back on the index as soon as it is trusted
            resumed = _shown(self._back_on_index(ctx, state), state.shown)
            if isinstance(resumed, pages.Page):
                return resumed
            state = resumed
        indexed = state is not None and state.phase == "ix"
        if state is None or indexed:
            try:
                return self._indexed(ctx, state)
            except (IndexUnusable, IndexMismatch) as exc:
                self.index_problem = str(exc)
                self._rebuild = self.build_index and not isinstance(exc, IndexBehind)
                if self._rebuild and isinstance(exc, IndexMismatch):
                    _distrust(self.layout, self._opened)  # not used again while rebuilt
                ctx.used = envelope.base_size(ctx.req.action, pages.entries_key(ctx.req.action))
        if state is not None and indexed:
            state = scan_state(state)
        return scan_page(ctx, state)

    def _back_on_index(self, ctx: pages.Ctx, state: CursorState) -> CursorState | pages.Page:
        """A scan cursor as an index cursor where the index is trusted and the place maps
        (index_resume.py); else the scan cursor, and a rebuild step runs after the call when
        the index is not trusted (so a paging look-back rebuilds it too)."""
        import sqlite3

        from segue._retrieval.index_file import IndexBehind, IndexUnusable, stream_in_progress
        from segue._retrieval.index_resume import resume

        write = self.build_index and not stream_in_progress(self.layout)
        try:
            ix = self._open(ctx, write=write)
        except IndexUnusable as exc:
            self.index_problem = str(exc)
            self._rebuild = self.build_index and not isinstance(exc, IndexBehind)
            return state
        try:
            return resume(ctx, ix, state)
        except sqlite3.Error:  # a damaged page: the index call that follows finds out
            return state
        finally:
            ix.conn.close()

    def _indexed(self, ctx: pages.Ctx, state: CursorState | None) -> pages.Page:
        import sqlite3

        from segue._retrieval import index_pages
        from segue._retrieval.index_file import IndexUnusable, stream_in_progress

        write = self.build_index and not stream_in_progress(self.layout)
        ix = self._open(ctx, write=write)
        try:
            return index_pages.ACTIONS[ctx.req.action](ctx, ix, state)
        except sqlite3.Error as exc:  # a page of the file is damaged
            raise IndexUnusable(f"index unreadable: {exc}") from None
        finally:
            ix.conn.close()

    def _open(self, ctx: pages.Ctx, *, write: bool) -> Ix:
        """The index for this call (checked and caught up), after re-deriving the rows a
        recorded one-line rewrite changed (index_rewrites.py) when that is what untrusted
        it; :class:`IndexUnusable` otherwise."""
        from segue._retrieval.index_file import IndexBehind, IndexUnusable

        # a call that waited for the builder still catches up what was appended meanwhile
        catch_up_until = max(self._started + CATCH_UP_SECONDS, time.monotonic() + 0.1)
        try:
            return self._open_file(ctx, write=write, deadline=catch_up_until)
        except IndexBehind:
            raise
        except IndexUnusable:
            if not write:
                raise
            from segue._retrieval.index_rewrites import rederive

            outcome = rederive(self.layout, ctx.snap)
            if outcome == "busy":
                raise IndexBehind("the index is busy re-deriving a rewritten row") from None
            if outcome != "rederived":
                raise
        return self._open_file(ctx, write=write, deadline=catch_up_until)

    def _open_file(self, ctx: pages.Ctx, *, write: bool, deadline: float) -> Ix:
        """``open_for_call``, noting which file it opened: the same one was at the index's
        path before and after (a builder may rename a new one in at any time)."""
        from segue._retrieval.index_pages import open_for_call

        before = _file_id(self.layout)
        self._opened = None
        ix = open_for_call(self.layout, ctx.snap, write=write, deadline=deadline)
        self._opened = before if before is not None and before == _file_id(self.layout) else None
        return ix

    def after_call(self) -> None:
        # Outside the store lock, one bounded step per call (index_steps.py): the answer
        # came from the scan, and a whole rebuild must stall neither this call nor writers.
        if not self._rebuild:
            return
        self._rebuild = False
        from segue._retrieval import index_builder

        if self.background and index_builder.enabled():
            builder = index_builder.ensure(self.layout)
            if builder.failed_on is not None and not builder.running():
                # it failed for a reason that lasts, and the files are as they were then
                self.index_problem = f"{self.index_problem}; not rebuilt: {builder.outcome}"
                return
            if builder.proc is not None:  # started now or before
                self._wait_for_builder()  # the next call's index, perhaps
                self.index_problem = (
                    f"{self.index_problem}; rebuilding between calls{builder.progress()}"
                )
                return
            self.index_problem = f"{self.index_problem}; {builder.outcome}"  # one step, then
        from segue._retrieval.index_build import NotBuilt
        from segue._retrieval.index_steps import build_step

        try:
            if build_step(self.layout, deadline=self._started + CALL_SECONDS) is None:
                self.index_problem = f"{self.index_problem}; rebuilding (one step per call)"
        except NotBuilt as exc:
            self.index_problem = f"{self.index_problem}; not rebuilt: {exc}"
        except OSError as exc:  # the side file cannot be put in place: the answer stands
            self.index_problem = f"{self.index_problem}; not rebuilt: {describe_os_error(exc)}"

    def people_search(self, query: str, *, context: int = 60) -> Iterable[Hit] | None:
        from segue._retrieval.index_people import search_people

        return search_people(self.layout, query, context=context)

    def people_words(self, query: str, *, context: int = 60) -> Iterator[Hit]:
        from segue._retrieval.index_people_words import search_words

        found = search_words(self.layout, query, context=context)
        return found if found is not None else super().people_words(query, context=context)


def _shown(
    resumed: CursorState | pages.Page, shown: tuple[int, ...]
) -> CursorState | pages.Page:
    """A relevance look-back back on the index still skips the items an earlier index page
    ranked and returned below where the scan stood (``shown``): in the cursor it goes on
    with, and in the scan place that cursor holds."""
    if not shown:
        return resumed
    state = resumed.state if isinstance(resumed, pages.Page) else resumed
    if state is None:
        return resumed
    if state.scan is not None:
        state = msgspec.structs.replace(state, scan=pages.keep_shown(state.scan, shown))
    state = pages.keep_shown(state, shown)
    if isinstance(resumed, pages.Page):
        resumed.state = state
        return resumed
    return state


#: a transcript at least this long whose index file is missing has its builder started as
#: the tool is made
EARLY_BYTES = 2 << 20
#: a shorter one than this whose index file is missing is indexed as its first call begins
#: (``_build_first``; at ~5-9 MB/s, 0.2-0.4 s)
FIRST_BUILD_BYTES = EARLY_BYTES
#: ``SEGUE_INDEX_FIRST_BUILD=off``: a short history's first call answers from the scan, as a
#: long one's does (the tests' short histories stand in for long ones that way)
FIRST_BUILD_ENV = "SEGUE_INDEX_FIRST_BUILD"


def _build_if_lost(layout: Layout) -> None:
    """A lost index (its file missing) of a transcript of :data:`EARLY_BYTES` or more: start
    its builder now, as the tool is made (a session opening, ``segue mcp serve``), so the
    model's steps before its first look-back are indexing time. Any other untrusted index
    waits for the first call (a failed send's is re-derived there, at one row's cost). A
    few ``stat`` calls when nothing is lost."""
    from segue._retrieval import index_builder
    from segue._retrieval.index_file import index_path, stream_in_progress

    if not index_builder.enabled() or index_path(layout).exists():
        return
    size = _history_bytes(layout)
    if size is not None and size >= EARLY_BYTES and not stream_in_progress(layout):
        index_builder.ensure(layout)


def _history_bytes(layout: Layout) -> int | None:
    """The archive's and chat's bytes (None: one is a link or a FIFO, which the first call
    reports)."""
    size = 0
    for path in (layout.archive, layout.chat):
        with contextlib.suppress(OSError):
            st = path.lstat()
            if not stat.S_ISREG(st.st_mode):
                return None
            size += st.st_size
    return size


def _file_id(layout: Layout) -> tuple[int, int] | None:
    """(device, inode) of the file at the index's path now (None: none)."""
    from segue._retrieval.index_file import index_path

    try:
        st = index_path(layout).stat()
    except OSError:
        return None
    return st.st_dev, st.st_ino


_ASIDE = ".distrusted-"  # an index moved aside by _distrust, and its process id
_ASIDE_SECONDS = 60.0  # a file moved aside this long ago by a process gone is left over


def _sweep_aside(path: Path) -> None:
    """Remove what a process killed inside :func:`_distrust` left moved aside (it can be
    as large as the index): files of a process that is gone, moved over a minute ago (a
    process of another pid namespace sharing the home is never that slow)."""
    now = time.time()
    for left in path.parent.glob(f"{path.name}{_ASIDE}*"):
        pid = left.name.rpartition("-")[2]
        try:
            if not pid.isdigit() or now - left.lstat().st_ctime < _ASIDE_SECONDS:
                continue
            os.kill(int(pid), 0)
        except ProcessLookupError:
            with contextlib.suppress(OSError):
                left.unlink()
        except OSError:
            continue


def _distrust(layout: Layout, opened: tuple[int, int] | None) -> None:
    """Remove the index file ``opened`` (device, inode), which disagrees with the
    transcript (a process that has it open keeps its copy, and re-reads every row it
    returns); never another one a builder has put in its place since. The file is moved
    aside first (atomic), then removed if it is that file; a new one moved aside by the way
    goes back, unless a newer one is in place by then."""
    from segue._retrieval.index_file import index_path

    if opened is None:
        return  # which file this call read is not known: the next call finds out again
    path = index_path(layout)
    _sweep_aside(path)
    aside = path.with_name(f"{path.name}{_ASIDE}{os.getpid()}")
    try:
        os.rename(path, aside)
    except OSError:
        return
    try:
        try:
            st = aside.stat()
        except OSError:
            return
        if (st.st_dev, st.st_ino) != opened:
            with contextlib.suppress(FileExistsError):
                os.link(aside, path)  # never over a newer index
    finally:
        with contextlib.suppress(OSError):
            aside.unlink()
