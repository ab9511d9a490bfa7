"""Reading a workspace's transcript from Python: ``segue.open_history``.

Two views of the same files, and the difference matters:

* :class:`History` — the transcript **for the person who owns it**: no page bounds, no
  result size limit, every window and item as ``segue history`` shows them (tool calls with
  their output, rejected input marked as such, machine messages labelled ``segue``). By
  default it starts at the **privacy floor** (the newest ``/clear --soft``), as the model's
  view does: a program that hands what it read to a model, a log or another person does not
  leak what the user cleared. ``include_cleared=True`` reads everything, below the floor
  too, exactly as ``segue history`` does: say so to whoever sees the result.
* :class:`ModelHistory` (``History.as_model()``) — exactly what the model's
  ``session_history`` tool answers (SPEC.md §4, R23-R27, R35-R36): the floor, 16 KiB pages,
  the 2 MiB / 500-row scan bound, cursors, the tool's JSON objects and error codes. It is
  the answer ``segue history tool`` prints, so it is what to test an agent's look-back with.

Both only read: nothing is created or written under the home (the history index is used
when it is trusted, never built from here), and a read takes the workspace's shared lock, so
a page or a listing is one consistent snapshot while another process appends.

The floor is found with the very rule the tool uses (:func:`segue._context.floor.is_floor_line`:
any reset row that is not a strict rollover, and any line whose bytes hold the reset key,
decodable or not), in the same single forward pass that reads the rows: what was gathered
before a floor is dropped when the floor is met, so memory stays bounded by the answer.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from segue._context.boundaries import is_reset_row
from segue._context.floor import is_floor_line
from segue._errors import SegueError, UsageError
from segue._history.protocol import Entry, TranscriptStore
from segue._messages import Row
from segue._retrieval.project import floor_window_id
from segue._retrieval.reader import MAX_LINE as TOOL_MAX_LINE
from segue._session.core import Session
from segue._settings import load_settings, settings_path
from segue._stores import open_store
from segue._views import windows as views
from segue._workspace import Layout
from segue.api._where import resolve_layout

T = TypeVar("T")
Order = Literal["newest", "oldest"]
Role = Literal["user", "assistant", "system"]


class NotFound(SegueError):
    """A well-formed window or item id the transcript does not have (above the floor, unless
    the reader includes what was cleared)."""

    code = "not_found"


@dataclass(frozen=True)
class HistoryWindow:
    """One context window: ``kind`` is ``root``, ``rollover``, ``reset`` or ``compaction``."""

    window_id: str
    kind: str
    first_item_id: str | None
    last_item_id: str | None
    #: how many items the window holds
    items: int
    #: when it began (its boundary's timestamp, else its first item's), ms since the epoch
    started_ms: int | None


@dataclass(frozen=True)
class HistoryItem:
    """One visible row as a person sees it. ``label`` is ``user``, ``assistant``, ``system``
    or ``segue`` (machine-authored: a budget warning); ``rejected`` marks input that did not
    fit the context window and was never sent (R22)."""

    item_id: str
    window_id: str
    role: str
    label: str
    timestamp: int | None
    text: str
    rejected: bool


@dataclass(frozen=True)
class SearchHit:
    """An item that matched: how many times, and the first match with some context."""

    item_id: str
    window_id: str
    role: str
    label: str
    timestamp: int | None
    matches: int
    snippet: str


def open_history(
    workspace: str | Layout | Session | None = None,
    *,
    home: str | os.PathLike[str] | None = None,
    workdir: str | os.PathLike[str] | None = None,
    store: str | None = None,
    include_cleared: bool = False,
) -> History:
    """The transcript of a workspace, to read (see the module docstring for the two views).

    ``workspace`` is an id, a :class:`~segue.Layout`, or a :class:`~segue.Session` (its own
    workspace and store); None means the id derived from ``workdir`` (default: the current
    directory). ``home`` defaults to ``$SEGUE_HOME``, else ``~/.segue``; ``store`` to the
    ``store.url`` setting, else the home's JSONL files. ``include_cleared``: read below the
    privacy floor too.

    A workspace the home does not hold is :class:`NotFound` (a mistyped id does not read as
    an empty transcript); one a session opened but never sent to reads as empty."""
    if isinstance(workspace, Session):
        if home is not None or store is not None:
            raise UsageError("a Session names its own home and store: give only the session")
        return History(workspace.layout, workspace.store, include_cleared=include_cleared,
                       owned=False)
    layout, _ = resolve_layout(workspace, home=home, workdir=workdir)
    url = store if store is not None else load_settings(settings_path(layout.home)).get(
        "store.url"
    )
    if not isinstance(url, str) and not layout.session_dir.is_dir():
        raise NotFound(f"no workspace {layout.workspace_id!r} under {layout.home}")
    reader = open_store(layout, url if isinstance(url, str) else None)
    return History(layout, reader, include_cleared=include_cleared)


class History:
    """A workspace's transcript for its owner: complete, unbounded, floored by default.

    Close it when done (or use ``with open_history(...) as history:``): over PostgreSQL it
    holds connections, also for the :meth:`as_model` views made from it. A history opened
    from a Session leaves the session's store to the session."""

    def __init__(
        self,
        layout: Layout,
        store: TranscriptStore,
        *,
        include_cleared: bool = False,
        owned: bool = True,
    ) -> None:
        self.layout = layout
        self.store = store
        #: whether what came before the newest ``/clear --soft`` is read too
        self.include_cleared = include_cleared
        self._owned = owned

    def close(self) -> None:
        """Release the store this history opened (its PostgreSQL connections); idempotent."""
        close = getattr(self.store, "close", None)
        if self._owned and callable(close):
            close()

    def __enter__(self) -> History:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def workspace_id(self) -> str:
        return self.layout.workspace_id

    # -- reading ---------------------------------------------------------------------------------

    def windows(self) -> list[HistoryWindow]:
        """Every context window, oldest first."""
        # Reading from a floor on, the first window is the one the floor opens (kind reset).
        summaries = self._last_run(views.window_summaries)
        return [
            HistoryWindow(s.window_id, s.kind, s.first_item_id, s.last_item_id, s.items,
                          s.started_ms)
            for s in summaries
        ]

    def items(self, window_id: str, *, role: Role | None = None) -> list[HistoryItem]:
        """The items of one window, oldest first (``role``: only that role's); NotFound for a
        window the transcript does not have."""
        views.check_window_id(window_id)
        found = self._last_run(lambda rows, start: views.window_items(rows, window_id, start))
        if found is None:
            raise NotFound(f"no window {window_id} in workspace {self.workspace_id}"
                           + self._above_floor())
        return [_item(i) for i in found if role is None or i.view.role == role]

    def read(self, item_id: str) -> list[HistoryItem]:
        """The item with this id, in full; several when a sequence number was reused (R27).
        NotFound when there is none."""
        wanted = item_id.removeprefix("#")
        found = self._last_run(lambda rows, start: views.find_items(rows, wanted, start))
        if not found:
            raise NotFound(f"no item {wanted} in workspace {self.workspace_id}"
                           + self._above_floor())
        return [_item(i) for i in found]

    def search(
        self, query: str, *, role: Role | None = None, context: int = 60
    ) -> list[SearchHit]:
        """Items whose text holds ``query`` (literal, case-insensitive), oldest first, each
        with a snippet of ``context`` characters either side of its first match. Reading
        everything, a trusted history index (or PostgreSQL's) answers as ``segue history
        search`` does, without a scan; the answer is the same either way."""
        def run(rows: Iterable[Row], start: views.WindowStart) -> list[views.Hit]:
            return list(views.search(rows, query, context=context, start=start))

        if not query:
            raise UsageError("the search query must not be empty")
        found = self._indexed_search(query, context) if self.include_cleared else None
        return [
            SearchHit(h.item.item_id, h.item.window_id, h.item.view.role, h.item.view.label,
                      h.item.row.timestamp, h.matches, h.snippet)
            for h in (found if found is not None else self._last_run(run))
            if role is None or h.item.view.role == role
        ]

    def as_model(self) -> ModelHistory:
        """The model's bounded view of the same workspace (``session_history``)."""
        return ModelHistory(self.layout, self.store)

    def _indexed_search(self, query: str, context: int) -> list[views.Hit] | None:
        """The whole transcript's hits from an index, or None (then the pass scans)."""
        from segue._retrieval.backends import pick_backend

        found = pick_backend(self.layout, self.store, build_index=False).people_search(
            query, context=context
        )
        return None if found is None else list(found)

    # -- the pass --------------------------------------------------------------------------------

    def _above_floor(self) -> str:
        return "" if self.include_cleared else " above the privacy floor (include_cleared=True " \
            "reads what /clear --soft cleared)"

    def _last_run(self, answer: Callable[[Iterable[Row], views.WindowStart], T]) -> T:
        """``answer`` over the rows above the newest floor (or over all of them): one forward
        pass, answering afresh from each floor on, so only the last answer is kept."""
        with self.store.read_locked():
            marks = self._marked()
            start = views.ROOT
            while True:
                met: list[views.WindowStart] = []
                rows = _until_floor(marks, met)
                result = answer(rows, start)
                for _row in rows:  # whatever ``answer`` left unread belongs to this run
                    pass
                if not met:
                    return result
                start = met[0]

    def _marked(self) -> Iterator[Row | views.WindowStart]:
        """The rows, with a WindowStart where a floor opens a window (none when reading
        below the floor too)."""
        for entry in self.store.entries():  # complete: the owner's view
            if not self.include_cleared and is_floor_line(entry.row, entry.reset_marker):
                yield _floor_start(entry)
            elif entry.row is not None:
                yield entry.row


def _until_floor(
    marks: Iterator[Row | views.WindowStart], met: list[views.WindowStart]
) -> Iterator[Row]:
    for mark in marks:
        if isinstance(mark, views.WindowStart):
            met.append(mark)
            return
        yield mark


def _floor_start(entry: Entry) -> views.WindowStart:
    """The window a floor opens, named as ``session_history`` names it: from its row, or by
    its end position when the tool cannot read the line as a row (undecodable, or longer
    than the tool's line bound)."""
    row = entry.row if entry.size <= TOOL_MAX_LINE else None
    boundary = row if row is not None and is_reset_row(row) else None
    return views.WindowStart(floor_window_id(row, entry.end), "reset", boundary)


def _item(item: views.Item) -> HistoryItem:
    return HistoryItem(item.item_id, item.window_id, item.view.role, item.view.label,
                       item.row.timestamp, item.text, item.view.rejected)


class ModelHistory:
    """Exactly the answers of the model's ``session_history`` tool (SPEC.md §4): each method
    is one call and returns the tool's JSON object unchanged, errors included
    (``{"ok": false, "error": {"code", "message"}}``); nothing here raises for what the
    transcript or the arguments hold. Cursors (``nextCursor``) are valid in this process
    only (R26); :meth:`pages` follows them for you."""

    def __init__(self, layout: Layout, store: TranscriptStore) -> None:
        from segue._tools.builtin import session_history_tool

        self.layout = layout
        # A reader that writes nothing: the index answers when it is trusted, never rebuilt.
        self._tool = session_history_tool(layout, store, build_index=False)

    def call(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """One call with the tool's own arguments (``{"action": "search", "query": …}``)."""
        return self._tool.call(args)

    def list_windows(
        self, *, order: Order | None = None, limit: int | None = None, cursor: str | None = None
    ) -> dict[str, Any]:
        return self.call(_args("list_windows", order=order, limit=limit, cursor=cursor))

    def list_items(
        self,
        window_id: str,
        *,
        role: Role | None = None,
        tool_name: str | None = None,
        order: Order | None = None,
        limit: int | None = None,
        max_chars_per_item: int | None = None,
        cursor: str | None = None,
    ) -> dict[str, Any]:
        return self.call(_args(
            "list_items", window_id=window_id, role=role, tool_name=tool_name, order=order,
            limit=limit, max_chars_per_item=max_chars_per_item, cursor=cursor,
        ))

    def search(
        self,
        query: str,
        *,
        role: Role | None = None,
        tool_name: str | None = None,
        order: Order | None = None,
        limit: int | None = None,
        max_chars_per_item: int | None = None,
        cursor: str | None = None,
    ) -> dict[str, Any]:
        return self.call(_args(
            "search", query=query, role=role, tool_name=tool_name, order=order, limit=limit,
            max_chars_per_item=max_chars_per_item, cursor=cursor,
        ))

    def read_item(
        self, item_id: str, *, offset_chars: int | None = None, limit_chars: int | None = None
    ) -> dict[str, Any]:
        return self.call(_args(
            "read_item", item_id=item_id, offset_chars=offset_chars, limit_chars=limit_chars
        ))

    def pages(self, args: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
        """Every page of one query: the first answer, then one per ``nextCursor`` until there
        is none (an error answer is yielded and ends the pages)."""
        page = self.call(args)
        yield page
        while page.get("ok") and page.get("nextCursor"):
            page = self.call({**args, "cursor": page["nextCursor"]})
            yield page


def _args(action: str, **given: object) -> dict[str, Any]:
    return {"action": action, **{k: v for k, v in given.items() if v is not None}}


__all__ = [
    "History",
    "HistoryItem",
    "HistoryWindow",
    "ModelHistory",
    "NotFound",
    "SearchHit",
    "open_history",
]
