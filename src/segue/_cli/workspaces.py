"""``segue workspaces``: the workspaces under the home (read-only: writes nothing)."""

from __future__ import annotations

import datetime as _dt

import click

from segue._cli.context import CliContext


def _when(ms: int | None) -> str:
    if ms is None:
        return "-"
    return _dt.datetime.fromtimestamp(ms / 1000, tz=_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


@click.command("workspaces")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_obj
def workspaces(obj: CliContext, as_json: bool) -> None:
    """List the workspaces under the home: id, working dir, rows, size, last activity.

    A sub-agent's workspace (a task, R41) is listed under its parent, indented, with the
    agent that ran it and how its task ended; --json gives each one's parent."""
    from segue._messages import encode_obj
    from segue._workspaces import list_workspaces

    found = list(list_workspaces(obj.home))
    if as_json:
        click.echo(encode_obj({"workspaces": [w.to_obj() for w in found]}).decode())
        return
    if not found:
        click.echo(f"no workspaces under {obj.home}")
        return
    for w in found:
        # R41: a task's child workspace is indented under its parent, with its agent.
        task = f"  task={w.task.agent}:{w.task.status or '?'}" if w.task is not None else ""
        click.echo(
            f"{'  ' * w.depth}{w.workspace_id}  rows={w.rows}  size={w.size}  "
            f"last={_when(w.last_activity_ms)}{task}  dir={w.workdir or '-'}"
        )
