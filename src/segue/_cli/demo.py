"""``segue demo``: a recorded agent run replayed offline through the engine (SPEC.md §5).

Where it runs:

* without the global ``--home``: in a fresh temporary directory, never in ``$SEGUE_HOME`` or
  ``~/.segue``. It is removed at the end unless ``--keep`` is given, or unless the demo failed
  (then it is kept and named, so the failure can be looked at).
* with ``--home DIR``: in ``DIR``, which is kept (it is the user's). The workspace
  (``demo``, or ``-w ID``) must not have a transcript yet.

Exit status: 0 when the demo showed what it claims (at least two rollovers, the detail
recovered and checked), 1 otherwise (the reason on stderr; with ``--json`` the summary is still
printed with ``"ok": false`` when the run got as far as the look back), 2 bad usage.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import click

from segue._demo.run import DEFAULT_TRAJECTORY, DEFAULT_WORKSPACE, prepare_demo, run_demo
from segue._demo.text import header, prompt_lines, summary
from segue._demo.trajectory import packaged_names
from segue._errors import DemoFailed, UsageError
from segue._render.terminal import Renderer, divider, no_color, quiet
from segue._workspace import Layout, validate_workspace_id


def _say(err: bool) -> Callable[[str], None]:
    return lambda text: click.echo(text, err=err)


@click.command("demo")
@click.option(
    "--keep",
    is_flag=True,
    help="Keep the temporary home (its path is printed) to explore the transcript afterwards.",
)
@click.option(
    "--trajectory",
    type=click.Choice(packaged_names()),
    default=DEFAULT_TRAJECTORY,
    show_default=True,
    metavar="NAME",
    help=f"Which packaged recorded run to replay: {', '.join(packaged_names())}.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the transcript on stderr and one JSON summary on stdout.",
)
@click.pass_context
def demo(ctx: click.Context, keep: bool, trajectory: str, as_json: bool) -> None:
    """Replay a recorded agent run offline until the context rolls over (at least twice),
    then have the agent recover a detail of its first window with session_history.

    Runs in a fresh temporary home unless the global --home is given; uses workspace "demo"
    unless -w is given. Needs no network and no model.
    """
    root = ctx.find_root().params
    if root.get("store_url") is not None:
        raise UsageError(
            "segue demo replays into its own JSONL home; run it without --store (then "
            "`segue history migrate --to URL` copies its transcript to PostgreSQL)"
        )
    chosen_home = root.get("home")
    chosen_workspace = root.get("workspace_id")
    workspace = validate_workspace_id(chosen_workspace or DEFAULT_WORKSPACE)
    temporary = not isinstance(chosen_home, Path)
    home = chosen_home if isinstance(chosen_home, Path) else Path(
        tempfile.mkdtemp(prefix="segue-demo-")
    )
    kept = keep or not temporary

    # With --json, stdout is the closing object alone and nothing human goes to stderr.
    say = quiet if as_json else _say(err=False)

    def out(text: str) -> None:
        if not as_json:
            click.echo(text, nl=False)

    renderer = Renderer(out=out, err=say, color=False if as_json or no_color() else None)
    plain = as_json or no_color()

    def machine(text: str, *, bold: bool = False, dim: bool = False) -> None:
        say(text if plain else click.style(text, bold=bold, dim=dim))

    def on_prompt(prompt: str) -> None:
        renderer.finish()
        for line in prompt_lines(prompt):
            machine(line, bold=True)

    failed = True
    try:
        setup = prepare_demo(Layout(home, workspace), trajectory)
        note = "temporary; kept" if temporary and keep else (
            "temporary; removed at the end, --keep keeps it" if temporary else "kept"
        )
        for line in header(setup, home_note=note):
            machine(line, dim=True)
        report = run_demo(setup, on_event=renderer, on_prompt=on_prompt)
        renderer.finish()
        failed = not report.ok
        machine(divider("Summary"), bold=True)
        for line in summary(report, kept=kept or failed):
            machine(line)
        if as_json:
            closing = {**report.to_json(), "kept": kept or failed}
            if not closing["kept"]:
                del closing["home"]  # removed at the end: a path that no longer exists
            click.echo(json.dumps(closing))
        if failed:
            raise DemoFailed(f"the demo did not recover the detail: {report.retrieval.problem}")
    finally:
        renderer.finish()
        if temporary and not kept and not failed:
            _remove(home)
        elif temporary and failed and not keep:
            click.echo(f"segue: the demo's home is kept for inspection: {home}", err=True)


def _remove(home: Path) -> None:
    try:
        shutil.rmtree(home)
    except OSError as exc:
        # The demo itself succeeded; a leftover temporary directory is worth a line, not a
        # failed exit.
        click.echo(f"segue: could not remove the demo's temporary home {home}: {exc}", err=True)
