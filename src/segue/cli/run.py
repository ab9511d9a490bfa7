"""``segue run``, ``segue clear`` and ``segue compact`` (SPEC.md §5)."""

from __future__ import annotations

import json
import sys
import time
import uuid
from pathlib import Path

import click

from segue.cli.context import CliContext
from segue.cli.render import Renderer
from segue.errors import RuntimeFailure, SegueError, UsageError
from segue.events import Event, RolledOver
from segue.history import HistoryStore
from segue.session.core import soft_reset
from segue.session.factory import open_session
from segue.tools.carryover_file import CarryoverFile

#: SPEC.md §5 exit statuses of ``segue run``.
EXIT_FOR_STATUS = {"completed": 0, "paused": 3, "rejected": 3, "error": 1}


@click.command("run")
@click.option("-m", "--model", default=None, help="Model as provider:name (e.g. scripted:s.json).")
@click.option("--agent", "agent_name", default=None, help="exec, plan, explore or a custom agent.")
@click.option("--json", "as_json", is_flag=True, help="End with one JSON object on stdout.")
@click.argument("prompt")
@click.pass_obj
def run(
    obj: CliContext, model: str | None, agent_name: str | None, as_json: bool, prompt: str
) -> None:
    """Send PROMPT and run the turn to its end.

    Exit status: 0 completed, 3 paused or rejected by a context guard (reason on stderr),
    1 any other error, 2 bad usage.
    """
    if as_json:
        renderer = Renderer(out=lambda s: click.echo(s, nl=False, err=True), color=False)
    else:
        renderer = Renderer()
    rollovers: list[RolledOver] = []

    def on_event(event: Event) -> None:
        if isinstance(event, RolledOver):
            rollovers.append(event)
        renderer(event)

    session = open_session(
        obj.layout, workdir=Path.cwd(), model=model, agent_name=agent_name, on_event=on_event
    )
    try:
        result = session.send(prompt)
    except RuntimeFailure as exc:
        # §5: the closing object reports "error" for any runtime failure of the turn (a
        # tampered tokenizer, a store error), not only provider errors; the root group then
        # prints the error line and exits 1.
        renderer.finish()
        if as_json:
            try:
                window_id = session.window_id()
            except SegueError:
                raise exc from None  # the store itself failed: no window id to report
            closing = {"status": "error", "reason": exc.message, "windowId": window_id,
                       "rollovers": len(rollovers)}
            click.echo(json.dumps(closing))
        raise
    renderer.finish()
    if as_json:
        click.echo(json.dumps(result.to_json()))
    if result.status != "completed" and result.reason:
        click.echo(f"segue: {result.status}: {result.reason}", err=True)
    sys.exit(EXIT_FOR_STATUS[result.status])


@click.command("clear")
@click.option("--soft", is_flag=True, help="Start a fresh window; keep everything on disk.")
@click.option("--yes", is_flag=True, help="Do not ask before a hard clear.")
@click.pass_obj
def clear(obj: CliContext, soft: bool, yes: bool) -> None:
    """Clear the context. --soft appends a reset (the privacy floor for session_history);
    without it the whole transcript of this workspace is destroyed."""
    store = HistoryStore(obj.layout)
    carryover = CarryoverFile(obj.layout, store)
    if soft:
        wrote = soft_reset(
            store, row_id=f"reset-{uuid.uuid4().hex[:16]}", now_ms=time.time_ns() // 1_000_000
        )
        carryover.clear()  # R10: a manual reset also forgets the edited-file carryover
        click.echo("context cleared (soft)" if wrote else "nothing to clear")
        return
    if not yes:
        if not sys.stdin.isatty():
            raise UsageError("a hard clear destroys the transcript; pass --yes to confirm")
        click.confirm(
            f"Destroy the whole transcript of workspace {obj.workspace_id!r}?", abort=True
        )
    store.clear_all()
    carryover.clear()
    click.echo("transcript destroyed")


@click.command("compact")
@click.option("-m", "--model", default=None, help="Model that writes the summary.")
@click.option("--agent", "agent_name", default=None)
@click.pass_obj
def compact(obj: CliContext, model: str | None, agent_name: str | None) -> None:
    """Summarize the active window into a compaction boundary (works with rollover on too)."""
    session = open_session(obj.layout, workdir=Path.cwd(), model=model, agent_name=agent_name)
    window_id = session.compact()  # CompactionFailed → exit 3, nothing committed
    click.echo(f"compacted: the conversation continues in {window_id}")
