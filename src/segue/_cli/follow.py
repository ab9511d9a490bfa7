"""``segue history follow`` and ``segue history items WINDOW -f``: new batches as they land.

The follower remembers the highest ``historySequence`` it has seen (sequences only ever grow
per workspace, R28, also across a hard clear) and, whenever the store's watch
(:mod:`segue._history.watch`) wakes it, reads the transcript backwards down to that sequence:
what lies above it is new, oldest first. So a follower never shows a row twice, never skips
one, and costs a read of only what was appended. Rows are shown as ``history items`` shows
them: the people's projection (hidden rows and boundaries are not items; a new window gets a
divider line), and a floor (a manual reset) in a new batch hides what that batch put before
it. Ctrl-C ends it with exit status 130 and no traceback.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

import click

from segue._cli.search_view import write as _write
from segue._cli.search_view import write_json as _json
from segue._context.boundaries import boundary_kind, is_boundary
from segue._context.floor import is_floor_line
from segue._views.export import format_timestamp
from segue._views.windows import ROOT, Item, WindowStart, check_window_id, walk

if TYPE_CHECKING:
    from segue._cli.context import CliContext
    from segue._history.protocol import Entry, TranscriptStore
    from segue._history.watch import Watch
    from segue._messages import Row

T = TypeVar("T")

EXIT_INTERRUPTED = 130
#: how long a follower sleeps without any wake-up before it reads the store anyway
RECHECK_SECONDS = 1.0


@dataclass
class Tail:
    """Where a follower stands: the highest sequence seen and the window open after it."""

    last: int | None
    window: WindowStart


def window_of(boundary: Row) -> WindowStart:
    from segue._retrieval.project import floor_window_id

    return WindowStart(floor_window_id(boundary, 0), boundary_kind(boundary), boundary)


def start(store: TranscriptStore) -> Tail:
    """The end of the transcript now: its highest sequence and the window open there."""
    last: int | None = None
    for line in store.entries_reverse():
        row = line.row
        if row is None:
            continue
        if last is None and row.sequence is not None:
            last = row.sequence
        if is_boundary(row):
            return Tail(last, window_of(row))
    return Tail(last, ROOT)


def fresh(store: TranscriptStore, tail: Tail) -> list[Entry]:
    """The lines above ``tail.last``, oldest first (read backwards, stopping at it)."""
    found: list[Entry] = []
    for line in store.entries_reverse():
        seq = line.row.sequence if line.row is not None else None
        if seq is not None and tail.last is not None and seq <= tail.last:
            break
        found.append(line)
    found.reverse()
    return found


def events(lines: list[Entry], tail: Tail) -> Iterator[WindowStart | Item]:
    """What ``lines`` (new, oldest first) show, advancing ``tail``: the floor applied (a
    manual reset hides what came before it), then windows and items as ``walk`` yields
    them; the first event is the window the lines continue (already shown)."""
    for line in lines:
        if line.row is not None and line.row.sequence is not None:
            tail.last = max(line.row.sequence, tail.last if tail.last is not None else -1)
    floor = max(
        (i for i, line in enumerate(lines) if is_floor_line(line.row, line.reset_marker)),
        default=-1,
    )
    if floor >= 0 and lines[floor].row is None:
        # A floor that is not a readable row: what follows opens an unnamed window.
        yield tail.window
        tail.window = WindowStart(f"w:raw:{lines[floor].end}", "reset", None)
        floor += 1
    rows = [line.row for line in lines[max(floor, 0) :] if line.row is not None]
    for event in walk(rows, tail.window):
        if isinstance(event, WindowStart):
            tail.window = event
        yield event


def show(events_: Iterable[WindowStart | Item], *, as_json: bool) -> None:
    """Print items as ``history items`` does, with a divider where a new window begins
    (none for the window a batch continues: its first event)."""
    from segue._cli.history import _one_line

    for index, event in enumerate(events_):
        if isinstance(event, WindowStart):
            if not as_json and index > 0:
                _write(f"── window {event.window_id} ({event.kind}) ──\n")
            continue
        if as_json:
            _json(event.to_obj())
            continue
        stamp = format_timestamp(event.row.timestamp)
        label = event.view.label + ("!" if event.view.rejected else "")
        _write(f"#{event.item_id:<8} {label:<10} {stamp}  {_one_line(event.text, 70)}\n")
    _flush()


def _flush() -> None:
    with contextlib.suppress(ValueError):
        sys.stdout.flush()


def follow(
    store: TranscriptStore, watcher: Watch, tail: Tail, *, as_json: bool, workspace: str
) -> None:
    """Print every new batch as it lands, until interrupted. ``watcher`` was opened before
    ``tail`` was read, so no batch falls between the two. A line on stderr says that the
    follower is live (every batch from then on is printed)."""
    click.echo(f"segue: following workspace {workspace}; Ctrl-C to stop", err=True)
    while True:
        watcher.wait(RECHECK_SECONDS)
        lines = _locked(store, lambda: fresh(store, tail))
        if lines:
            show(events(lines, tail), as_json=as_json)


def _locked(store: TranscriptStore, read: Callable[[], T]) -> T:
    """A read under the store's shared read lock (no half-written batch is ever seen),
    except for a store whose every read is one committed snapshot (PostgreSQL's): it
    needs no lock, and the follower does not hold up its writers."""
    from segue._history.protocol import ReadsSnapshots

    if isinstance(store, ReadsSnapshots):
        return read()
    with store.read_locked():
        return read()


@contextlib.contextmanager
def interrupted() -> Iterator[None]:
    """Ctrl-C ends a follower quietly with exit status 130."""
    try:
        yield
    except KeyboardInterrupt:
        _flush()
        raise SystemExit(EXIT_INTERRUPTED) from None


def follow_workspace(ctx: CliContext, as_json: bool) -> None:
    """``segue history follow``: the workspace's new batches, from now on."""
    from segue._history.watch import watch

    with interrupted():
        store = ctx.store()
        if not ctx.workspace_exists():
            click.echo(
                f"segue: workspace {ctx.workspace_id} has no history yet; waiting for its "
                "first batch",
                err=True,
            )
        watcher = watch(store)
        try:
            tail = _locked(store, lambda: start(store))
            follow(store, watcher, tail, as_json=as_json, workspace=ctx.workspace_id)
        finally:
            watcher.close()


def follow_items(ctx: CliContext, window_id: str, as_json: bool) -> None:
    """``segue history items WINDOW -f``: the window's items as ``history items`` lists
    them (the whole transcript, no floor), then every new batch. With ``--json`` each item
    is one object on a line of its own, the listed ones included."""
    from segue._cli.history import NotFound
    from segue._history.protocol import every_row
    from segue._history.watch import watch

    check_window_id(window_id)
    with interrupted():
        store = ctx.existing_store()
        watcher = watch(store)
        try:
            tail = Tail(None, ROOT)
            found = inside = False
            for event in walk(_tracked(every_row(store), tail)):
                if isinstance(event, WindowStart):
                    tail.window = event
                    inside = event.window_id == window_id
                    found = found or inside
                elif inside:
                    show([event], as_json=as_json)
            if not found:
                raise NotFound(f"no window {window_id} in workspace {ctx.workspace_id}")
            follow(store, watcher, tail, as_json=as_json, workspace=ctx.workspace_id)
        finally:
            watcher.close()


@click.command("follow")
@click.option("--json", "as_json", is_flag=True, help="One item object per line.")
@click.pass_context
def follow_cmd(ctx: click.Context, as_json: bool) -> None:
    """Print each new batch of the workspace as it lands, until Ctrl-C.

    Items are shown as `segue history items` shows them, with a divider where a new window
    begins; a manual reset in a new batch hides what that batch put before it. PostgreSQL
    stores wake the follower through LISTEN/NOTIFY, JSONL stores through a file watch.
    """
    obj: CliContext = ctx.find_root().obj
    follow_workspace(obj, as_json)


def _tracked(rows: Iterable[Row], tail: Tail) -> Iterator[Row]:
    """``rows``, keeping ``tail.last`` at the highest sequence passed on."""
    for row in rows:
        if row.sequence is not None:
            tail.last = max(row.sequence, tail.last if tail.last is not None else -1)
        yield row


__all__ = [
    "EXIT_INTERRUPTED", "Tail", "events", "follow", "follow_cmd", "follow_items",
    "follow_workspace", "fresh", "start",
]
