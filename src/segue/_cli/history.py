"""``segue history``: the transcript for people (SPEC.md §5).

Everything here reads the *whole* transcript: it is the user's own data, so there is no
privacy floor and no page bound (the agent's bounded, floored view is ``session_history``).
Reads stream rows from the store in one forward pass and keep only what they print, so a
history of any size is listed, searched and exported in bounded memory.

Output is written as UTF-8 bytes with ``backslashreplace`` (:mod:`segue._cli.search_view`).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from contextlib import nullcontext
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

from segue._cli.lazy import Lazy, LazyGroup
from segue._cli.search_view import print_search
from segue._cli.search_view import write as _write
from segue._cli.search_view import write_json as _json
from segue._errors import FileError, SegueError, UsageError, WorkspaceNotFound
from segue._fsutil import atomic_output, describe_os_error, read_regular, wide_modes
from segue._views.export import FORMATS, ExportFormat, export, format_timestamp
from segue._views.windows import (
    check_window_id,
    find_items,
    search,
    window_items,
    window_summaries,
)

if TYPE_CHECKING:
    from segue._cli.context import CliContext
    from segue._history.protocol import MaintainedStore
    from segue._messages import Row
    from segue._views.windows import Hit

_LINE = 100
#: An import is one batch held in memory; a file past this is not a session file.
MAX_IMPORT_BYTES = 1 << 30


def _ctx(ctx: click.Context) -> CliContext:
    obj: CliContext = ctx.find_root().obj
    return obj


def _store(ctx: click.Context) -> MaintainedStore:
    # Opened here so that `segue --help` and the pure views do not load the store.
    return _ctx(ctx).store()


def _existing(ctx: click.Context) -> MaintainedStore:
    """The store of a workspace that exists: a read of a misspelt id says so (exit 1)."""
    return _ctx(ctx).existing_store()


def _rows(ctx: click.Context) -> Iterator[Row]:
    # The user's own view is complete: no line is too long for it (R24's 1 MiB bound is the
    # model tool's). Rows stream one at a time, so memory is bounded by the longest row.
    from segue._history.protocol import every_row

    return every_row(_existing(ctx))


def _every_row(store: MaintainedStore) -> Iterator[Row]:
    from segue._history.protocol import every_row

    return every_row(store)


def _one_line(text: str, width: int = _LINE) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


class NotFound(SegueError):
    """A well-formed window or item id that the transcript does not have (exit 1)."""

    code = "not_found"


@click.group(
    "history",
    cls=LazyGroup,
    lazy={
        "follow": Lazy(
            "segue._cli.follow:follow_cmd",
            "Print each new batch of the workspace as it lands, until Ctrl-C.",
        ),
        "migrate": Lazy(
            "segue._cli.store:migrate_cmd",
            "Copy this workspace's transcript to another store, byte for byte, and verify the "
            "copy.",
        ),
        "tool": Lazy(
            "segue._cli.history_tool:history_tool",
            "Answer session_history calls (JSON objects) exactly as the agent sees them.",
        ),
    },
)
def history() -> None:
    """Read, search, export, check and import the workspace's transcript.

    These commands show the whole transcript (every window, also what the agent can no
    longer see): it is your own data. Use `segue -w ID history …` for another workspace.
    """


@history.command("windows")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable window objects.")
@click.pass_context
def windows_cmd(ctx: click.Context, as_json: bool) -> None:
    """List the context windows, oldest first."""
    summaries = window_summaries(_rows(ctx))
    if as_json:
        _json({"windows": [s.to_obj() for s in summaries]})
        return
    ws = _ctx(ctx).workspace_id
    total = sum(s.items for s in summaries)
    _write(f"Workspace {ws}: {len(summaries)} window(s), {total} item(s)\n")
    for s in summaries:
        span = f"#{s.first_item_id} … #{s.last_item_id}" if s.items else "(empty)"
        _write(
            f"{s.window_id:<10} {s.kind:<10} {s.items:>6} items  {span:<20} "
            f"{format_timestamp(s.started_ms) if s.started_ms is not None else ''}\n"
        )


@history.command("items")
@click.argument("window_id", metavar="WINDOW")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable item objects.")
@click.option("-f", "--follow", is_flag=True, help="Then print new batches as they land.")
@click.pass_context
def items_cmd(ctx: click.Context, window_id: str, as_json: bool, follow: bool) -> None:
    """List the items of one window (ids from `segue history windows`)."""
    if follow:  # the listing, then `segue history follow` (one JSON object per line)
        from segue._cli.follow import follow_items

        follow_items(_ctx(ctx), window_id, as_json)
        return
    items = window_items(_rows(ctx), check_window_id(window_id))
    if items is None:
        raise NotFound(f"no window {window_id} in workspace {_ctx(ctx).workspace_id}")
    if as_json:
        _json({"items": [i.to_obj() for i in items]})
        return
    for item in items:
        stamp = format_timestamp(item.row.timestamp)
        label = item.view.label + ("!" if item.view.rejected else "")
        _write(f"#{item.item_id:<8} {label:<10} {stamp}  {_one_line(item.text, 70)}\n")


@history.command("read")
@click.argument("item_id", metavar="ITEM")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable item objects.")
@click.pass_context
def read_cmd(ctx: click.Context, item_id: str, as_json: bool) -> None:
    """Print one item in full (ids from `segue history items`)."""
    wanted = item_id.removeprefix("#")
    found = find_items(_rows(ctx), wanted)
    if not found:
        raise NotFound(f"no item {wanted} in workspace {_ctx(ctx).workspace_id}")
    if as_json:
        _json({"items": [i.to_obj() for i in found]})
        return
    for index, item in enumerate(found):
        if index:
            _write("\n")  # a reused sequence (R27): every row that has it is shown
        stamp = format_timestamp(item.row.timestamp)
        rejected = " (rejected)" if item.view.rejected else ""
        _write(f"#{item.item_id} · {item.window_id} · {item.view.label}{rejected} · {stamp}\n\n")
        _write(item.text + "\n")


@history.command("search")
@click.argument("query")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable item objects.")
@click.option(
    "--words", is_flag=True,
    help="Find items holding any of QUERY's words (stems, identifier parts), best first.",
)
@click.pass_context
def search_cmd(ctx: click.Context, query: str, as_json: bool, words: bool) -> None:
    """Find items containing QUERY (literal text, case-insensitive) in the whole transcript:
    every window, also before a /clear --soft; what `segue history read` shows of each item.
    With --words: items holding any of its words, ranked by relevance (as the agent's
    session_history search ranks them), each snippet where the words meet.

    \b
    Exit status, as grep's: 0 when an item matches, 1 when none does (also when the
    workspace does not exist), 2 on an error (an empty query, an unreadable transcript).
    """
    # Over a current index this usually ran already, without click (segue._cli.quick_search).
    try:
        found = _print_hits(ctx, query, as_json, words=words)
    except (WorkspaceNotFound, BrokenPipeError):
        raise
    except SegueError as exc:
        _search_error(exc.message)
    except OSError as exc:
        _search_error(describe_os_error(exc))
    if not found:
        raise SystemExit(1)


def _search_error(message: str) -> NoReturn:
    click.echo(f"segue: error: {message}", err=True)
    raise SystemExit(2)


def _print_hits(ctx: click.Context, query: str, as_json: bool, *, words: bool = False) -> int:
    """Print the hits; how many there were."""
    if not query:  # refused before any output, by both stores
        raise UsageError("the search query must not be empty")
    _ctx(ctx).require_workspace()
    if words:
        from segue._retrieval.backends import pick_backend

        # the user's own view: every line, however long, read in bounded memory
        backend = pick_backend(_ctx(ctx).layout, _store(ctx), build_index=False)
        hits: Iterable[Hit] = backend.people_words(query)
    else:
        hits = _search(ctx, query)
    return print_search(_ctx(ctx).workspace_id, query, hits, as_json=as_json)



def _search(ctx: click.Context, query: str) -> Iterable[Hit]:
    # Imported here: sqlite3 and the index are not needed by `segue --help`.
    from segue._retrieval.backends import pick_backend

    store = _store(ctx)
    backend = pick_backend(_ctx(ctx).layout, store, build_index=False)
    hits = backend.people_search(query) if query else None
    if hits is None:  # no index answers now (or an empty query, refused below): scan
        hits = search(_every_row(store), query)  # complete: the user's own view
    return hits


class IndexNotBuilt(SegueError):
    """The history index could not be built now (the reason says why; exit 1)."""

    code = "index_not_built"


@history.command("reindex")
@click.pass_context
def reindex_cmd(ctx: click.Context) -> None:
    """Rebuild the history index (history-index.sqlite) from the transcript.

    The index makes session_history and `segue history search` fast at any depth. It is a
    cache: the transcript stays the only truth, and a missing or stale index is rebuilt on
    the agent's next look-back anyway. A progress bar is shown on a terminal.
    """
    from segue._retrieval.index_build import NotBuilt, rebuild
    from segue._retrieval.index_file import index_path

    _ctx(ctx).require_workspace()  # an index of nothing would create the workspace
    layout = _ctx(ctx).layout
    total = sum(p.stat().st_size for p in (layout.archive, layout.chat) if p.exists())
    try:
        if sys.stderr.isatty():
            with click.progressbar(length=total, label="Indexing", file=sys.stderr) as bar:
                meta = rebuild(layout, lambda done, _total: bar.update(done - bar.pos))
        else:
            meta = rebuild(layout)
    except NotBuilt as exc:
        raise IndexNotBuilt(f"history index not built: {exc}") from None
    size = index_path(layout).stat().st_size
    read = meta.archive_size + meta.chat_read
    _write(
        f"Indexed workspace {layout.workspace_id}: {read} transcript bytes into "
        f"{index_path(layout)} ({size} bytes)\n"
    )


@history.command("export")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="md",
    show_default=True,
    help="md: readable; html: self-contained page; json: rows as stored plus the windows.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    default=None,
    help="Write here (replaced atomically) instead of standard output. Only a regular file "
    "is replaced: a device, FIFO, directory or symbolic link there is refused.",
)
@click.pass_context
def export_cmd(ctx: click.Context, fmt: ExportFormat, output: Path | None) -> None:
    """Export the whole transcript, every window, with a divider where each one began."""
    store = _existing(ctx)
    workspace = _ctx(ctx).workspace_id
    rows = partial(_every_row, store)  # complete, like every view for the user
    # JSON reads the history twice (windows, then rows); the shared lock keeps both passes
    # on the same history. Markdown and HTML make one pass and need no lock.
    with store.read_locked() if fmt == "json" else nullcontext():
        chunks = export(fmt, rows, workspace)
        if output is None:
            for chunk in chunks:
                _write(chunk)
            return
        with atomic_output(output) as handle:
            for chunk in chunks:
                handle.write(chunk.encode("utf-8", "backslashreplace"))
    click.echo(f"Exported workspace {workspace} ({fmt}) to {output}", err=True)


@history.command("verify")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable report.")
@click.pass_context
def verify_cmd(ctx: click.Context, as_json: bool) -> None:
    """Check the transcript's integrity (read-only). Exit 1 on damage, 0 otherwise.

    Damage is what recovery has not dealt with yet: a torn tail, a partial batch, an
    interrupted rewrite, a broken receipt, sequences out of order. Unparseable complete
    lines are kept byte-exact and listed as warnings.
    """
    report = _existing(ctx).verify()
    layout = _ctx(ctx).layout
    warnings = [*report.warnings, *_index_warnings(ctx), *wide_modes(
        layout.home, layout.session_dir.parent, layout.session_dir, files_in=layout.session_dir)]
    if as_json:
        _json({"ok": report.ok, "problems": list(report.problems), "warnings": warnings})
    else:
        ws = _ctx(ctx).workspace_id
        _write(
            f"Workspace {ws}: {'ok' if report.ok else 'DAMAGED'} ({report.rows} rows in "
            f"{report.lines} lines; receipt {report.receipt_state})\n"
        )
        _lines("problem", report.problems)
        _lines("warning", warnings)
    if not report.ok:
        raise SystemExit(1)


def _index_warnings(ctx: click.Context) -> list[str]:
    """The history index compared with the transcript (R35): a mismatch is a warning, never
    damage (the index is a cache; the agent's next look-back rebuilds it)."""
    from segue._retrieval.index_people import check_index

    check = check_index(_ctx(ctx).layout)
    fix = "it is rebuilt on the next look-back, or run `segue history reindex`"
    if check.state == "untrusted":
        return [f"history index not used ({check.reason}); {fix}"]
    return [f"history index mismatch: {m}; {fix}" for m in check.mismatches]


def _lines(kind: str, entries: Iterable[str]) -> None:
    for entry in entries:
        _write(f"  {kind}: {entry}\n")


@history.command("import")
@click.argument("file", type=click.Path(path_type=Path))
@click.option(
    "--from",
    "source",
    type=click.Choice(["claude-code", "codex"]),
    default=None,
    help="Another agent's transcripts: a Claude Code session file or project directory, "
    "a Codex rollout file or sessions directory.",
)
@click.option(
    "--follow-symlinks",
    is_flag=True,
    help="With --from: FILE may be a symbolic link (to a regular file or a directory); links "
    "inside a directory are still left out.",
)
@click.pass_context
def import_cmd(ctx: click.Context, file: Path, source: str | None, follow_symlinks: bool) -> None:
    """Append the rows of a Xum session file (JSONL) as one batch.

    Rows keep everything but historySequence (reassigned) and workspaceId (this workspace).
    A file with any line that is not a row is refused whole: nothing is appended.

    With --from, FILE is another agent's transcript (or a directory of them): text, tool
    calls and their results become rows, reasoning is left out, each source session becomes
    its own context window, each sub-agent's work a task (a child workspace, read with
    session_history's task_id), and only the source's own clear becomes a manual reset.
    Importing again appends only what is new.
    """
    ws = _ctx(ctx).workspace_id
    if _ctx(ctx).store_url is None:
        from segue._history.inflight import refuse_if_streaming

        refuse_if_streaming(_ctx(ctx).layout)  # before the lock file is even created
    if source is None:
        try:
            data = read_regular(file, max_size=MAX_IMPORT_BYTES)
        except FileError as exc:
            raise click.BadParameter(exc.message, param_hint="FILE") from None
        if data is None:
            raise click.BadParameter(f"{file} does not exist", param_hint="FILE")
        try:
            rows = _store(ctx).import_rows(data)
        except SegueError as exc:  # another agent's transcript: name the --from it needs
            from segue._cli.import_hint import import_hint

            exc.cli_message += import_hint(data, str(file))
            raise
        agents = 0
        task_rows = 0
    else:
        import os

        from segue._importers import TaskHome, import_path
        from segue._stores import open_store

        if not os.path.lexists(file):
            raise click.BadParameter(f"{file} does not exist", param_hint="FILE")
        target = Path(os.path.realpath(file)) if follow_symlinks else file
        cli_ctx = _ctx(ctx)
        # R41: each sub-agent becomes a task, a child workspace in a store of this one's kind.
        tasks = TaskHome(cli_ctx.layout.home, ws, lambda child: open_store(child,
                                                                           cli_ctx.store_url))
        done = import_path(_store(ctx), source, target, tasks=tasks)
        for left in done.skipped:
            click.echo(f"segue: left out {left.path}: it is {left.why}", err=True)
        rows, agents = done.rows, done.from_sub_agents
        for task in done.tasks:
            if task.rows:
                _write(f"sub-agent imported as task {task.task_id}: {len(task.rows)} row(s); "
                       f"its history: segue -w {task.task_id} history windows\n")
        task_rows = sum(len(t.rows) for t in done.tasks)
    if not rows:
        what = "nothing new" if source is not None else "no rows"
        if task_rows:  # a grown sub-agent: only its task's workspace had anything new
            _write(f"{file}: nothing new for workspace {ws} itself\n")
            return
        _write(f"{file}: {what}; nothing imported into workspace {ws}\n")
        return
    first, last = rows[0].sequence, rows[-1].sequence
    of_agents = f" ({agents} from sub-agents)" if agents else ""
    _write(f"Imported {len(rows)} row(s){of_agents} into workspace {ws} "
           f"(sequences {first}–{last})\n")
