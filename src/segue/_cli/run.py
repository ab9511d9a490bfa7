"""``segue run``, ``segue clear`` and ``segue compact`` (SPEC.md §5)."""

from __future__ import annotations

import json
import os
import sys
import time
import uuid
from pathlib import Path

import click

from segue._chat.interrupt import QuitNow, run_interruptible
from segue._cli.context import CliContext
from segue._cli.prompt_input import read_prompt
from segue._context.assembly import current_window_id
from segue._errors import RuntimeFailure, SegueError, UsageError
from segue._events import Event, Notice, RolledOver, TaskFinished
from segue._history.inflight import refuse_if_streaming
from segue._policy.approval import MODES
from segue._render.terminal import Renderer, quiet
from segue._session.admission import Cancellation
from segue._session.core import soft_reset
from segue._session.factory import open_session
from segue._session.window import load_window
from segue._tools.carryover_file import CarryoverFile

#: SPEC.md §5 exit statuses of ``segue run``.
EXIT_FOR_STATUS = {"completed": 0, "paused": 3, "rejected": 3, "error": 1}
#: The conventional status of a program stopped by SIGINT.
EXIT_INTERRUPTED = 130
#: What the model reads when a call that would ask is denied (R38), in the command's words.
UNATTENDED_CLI = (
    "it needs approval and nobody can be asked (segue run, and a chat reading piped input, "
    "are non-interactive). The user can allow it with --approve auto-edit or --approve full, "
    "the approval setting, or a remembered rule"
)


@click.command("run")
@click.option("-m", "--model", default=None, help="Model as provider:name (e.g. scripted:s.json).")
@click.option("--agent", "agent_name", default=None, help="exec, plan, explore or a custom agent.")
@click.option(
    "--approve",
    "approve",
    type=click.Choice(MODES),
    default=None,
    help="Approval for tools that change the machine: ask (= deny here: nobody can be asked), "
    "auto-edit (file edits run, bash is denied), full (everything runs), deny. Default: the "
    "approval setting, else ask.",
)
@click.option(
    "-f",
    "--file",
    "prompt_file",
    type=click.Path(dir_okay=False, path_type=Path, allow_dash=True),
    default=None,
    help="Read the prompt from FILE (- for standard input).",
)
@click.option("--json", "as_json", is_flag=True, help="End with one JSON object on stdout.")
@click.argument("prompt", required=False)
@click.pass_obj
def run(  # noqa: PLR0917 - click passes every option positionally
    obj: CliContext,
    model: str | None,
    agent_name: str | None,
    approve: str | None,
    prompt_file: Path | None,
    as_json: bool,
    prompt: str | None,
) -> None:
    """Send PROMPT and run the turn to its end.

    \b
    The prompt comes from PROMPT, from -f FILE, or from standard input (PROMPT "-", or
    whenever stdin is a pipe or a file); given both, they are joined:
      cat err.log | segue run "explain this error"

    Tools that change the machine (bash, file_write, file_edit) need approval. run cannot
    ask, so a call that would ask is denied and the model is told so; allow them with
    --approve auto-edit or --approve full, the approval setting, or a remembered rule.

    Ctrl-C stops the turn at once and exits 130: a streaming reply keeps what it said so far,
    a tool call it had begun never runs, and steps that settled stay on disk; a second Ctrl-C
    quits at once.

    Exit status: 0 completed, 3 paused or rejected by a context guard (reason on stderr),
    1 any other error, 2 bad usage, 130 interrupted.
    """
    obj.note_earlier_workspace()
    # With --json, stdout is the closing object alone; stderr only says why a run failed.
    renderer = Renderer(out=quiet, err=quiet, color=False) if as_json else Renderer()
    rollovers: list[RolledOver] = []
    tasks: list[TaskFinished] = []  # R41: the sub-agents this turn ran, as they ended
    # A notice is shown when the next event comes, so the one that only repeats the reason
    # the turn ends with is dropped: an error is printed once, as "segue: STATUS: reason".
    held: list[Notice] = []

    def on_event(event: Event) -> None:
        if held:
            renderer(held.pop())
        if isinstance(event, RolledOver):
            rollovers.append(event)
        if isinstance(event, TaskFinished):
            tasks.append(event)
        if isinstance(event, Notice):
            held.append(event)
        else:
            renderer(event)

    try:
        text = read_prompt(prompt, prompt_file)
        session = open_session(
            obj.layout,
            workdir=Path.cwd(),
            model=model,
            agent_name=agent_name,
            on_event=on_event,
            approval=approve,
            store_url=obj.store_url,
            unattended=UNATTENDED_CLI,
        )
    except SegueError as exc:
        # §5: the closing object is printed for a run that fails before its turn, too.
        if as_json:
            _echo_closing(obj, exc.cli_message, rollovers=0)
        raise
    cancellation = Cancellation()
    try:
        result = run_interruptible(
            lambda: session.send(text, cancellation=cancellation),
            cancellation.cancel,
            lambda message: _stderr_line(f"segue: {message}"),
        )
    except QuitNow:
        renderer.finish()  # a held notice is dropped: the line below says what happened
        _stderr_line("segue: interrupted: quit at once; every settled step is on disk")
        sys.exit(EXIT_INTERRUPTED)
    except RuntimeFailure as exc:
        session.close()
        # §5: the closing object reports "error" for any runtime failure of the turn (a
        # tampered tokenizer, a store error), not only provider errors; the root group then
        # prints the error line and exits 1.
        renderer.finish()
        if as_json:
            _echo_closing(obj, exc.cli_message, rollovers=len(rollovers), tasks=tasks)
        raise
    if held and held[0].text != result.reason:
        renderer(held.pop())
    session.close()  # stops the MCP servers the turn started
    renderer.finish()
    if as_json:
        click.echo(json.dumps({**result.to_json(), **_tasks_key(tasks)}))
    if result.status == "paused" and cancellation.cancelled:
        click.echo("segue: interrupted: the steps that settled are kept on disk", err=True)
        sys.exit(EXIT_INTERRUPTED)
    if result.status != "completed" and result.reason:
        click.echo(f"segue: {result.status}: {result.reason}", err=True)
    sys.exit(EXIT_FOR_STATUS[result.status])


def _stderr_line(text: str) -> None:
    # From the SIGINT handler too: straight to the descriptor, never a buffered stream.
    data = ("\n" + text + "\n").encode("utf-8", "replace")
    while data:
        data = data[os.write(2, data) :]


def _tasks_key(tasks: list[TaskFinished]) -> dict[str, object]:
    """R41: ``"tasks"`` lists the sub-agents the turn ran, in the order they ended; a turn
    that ran none keeps §5's closing object exactly."""
    return {"tasks": [t.to_obj() for t in tasks]} if tasks else {}


def _echo_closing(
    obj: CliContext, reason: str, *, rollovers: int, tasks: list[TaskFinished] | None = None
) -> None:
    """The closing object of a run that failed outside its turn's own result."""
    try:
        layout = obj.layout
        started = obj.store_url is not None or layout.chat.exists() or layout.archive.exists()
        window_id = current_window_id(load_window(obj.store())) if started else "w:0"
    except SegueError:
        return  # the store itself failed: there is no window id to report
    closing = {"status": "error", "reason": reason, "windowId": window_id,
               "rollovers": rollovers, "text": None, "usage": None, **_tasks_key(tasks or [])}
    click.echo(json.dumps(closing))


@click.command("clear")
@click.option("--soft", is_flag=True, help="Start a fresh window; keep everything on disk.")
@click.option("--yes", is_flag=True, help="Do not ask before a hard clear.")
@click.pass_obj
def clear(obj: CliContext, soft: bool, yes: bool) -> None:
    """Clear the context. --soft appends a reset (the privacy floor for session_history);
    without it the whole transcript of this workspace is destroyed."""
    if not obj.workspace_exists():  # an unused workspace: nothing to clear, nothing created
        click.echo(f"nothing to clear: workspace {obj.workspace_id} has no transcript")
        return
    if obj.store_url is None:
        refuse_if_streaming(obj.layout)
    store = obj.store()
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
    from segue._providers.scripted import forget_positions
    from segue._session.tasks import clear_tasks

    forget_positions(obj.layout.script_positions)  # a scripted model starts its script over
    tasks = clear_tasks(obj.layout, store)  # R41: and the tasks it ran
    click.echo("transcript destroyed" + (f" with {tasks} task workspace(s)" if tasks else ""))


@click.command("compact")
@click.option("-m", "--model", default=None, help="Model that writes the summary.")
@click.option("--agent", "agent_name", default=None)
@click.pass_obj
def compact(obj: CliContext, model: str | None, agent_name: str | None) -> None:
    """Summarize the active window into a compaction boundary (works with rollover on too)."""
    obj.require_workspace()  # a misspelt -w: one line, exit 1, and no folder made for it
    session = open_session(
        obj.layout,
        workdir=Path.cwd(),
        model=model,
        agent_name=agent_name,
        store_url=obj.store_url,
    )
    window_id = session.compact()  # CompactionFailed → exit 3, nothing committed
    click.echo(f"compacted: the conversation continues in {window_id}")
