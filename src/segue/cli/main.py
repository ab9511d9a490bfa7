"""``segue`` entry point: global options, the command groups, and error → exit code mapping.

Exit codes (SPEC.md §5): 0 success, 1 runtime failure, 2 bad usage, 3 a context guard
paused or rejected the turn.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from segue._version import __version__
from segue.cli.chat import chat
from segue.cli.context import CliContext
from segue.cli.demo import demo
from segue.cli.history import history
from segue.cli.history_tool import history_tool
from segue.cli.mcp import mcp_group
from segue.cli.run import clear, compact, run
from segue.cli.settings import settings_group
from segue.cli.store import migrate_cmd, store_group
from segue.cli.tokens import tokens
from segue.cli.workspaces import workspaces
from segue.errors import ContextSignal, SegueError, UsageError
from segue.fsutil import describe_os_error
from segue.history.factory import check_store_url
from segue.workspace import default_home, derive_workspace_id, validate_workspace_id


class SegueGroup(click.Group):
    """Turns segue's errors into one clear line on stderr and the documented exit code."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except SegueError as exc:
            click.echo(f"segue: error: {exc.cli_message}", err=True)
            if isinstance(exc, ContextSignal):
                raise SystemExit(3) from None
            if isinstance(exc, UsageError):
                raise SystemExit(2) from None
            raise SystemExit(1) from None
        except OSError as exc:
            # The backstop for a machine fault no layer below turned into a SegueError (a
            # full disk, a read-only home, no access): one line naming the path, exit 1.
            if isinstance(exc, BrokenPipeError):
                raise SystemExit(1) from None
            click.echo(f"segue: error: {describe_os_error(exc)}", err=True)
            raise SystemExit(1) from None


@click.group(cls=SegueGroup)
@click.option(
    "--home",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where segue keeps everything (default: $SEGUE_HOME or ~/.segue).",
)
@click.option(
    "-w",
    "--workspace",
    "workspace_id",
    default=None,
    help="Workspace id (default: derived from the current directory).",
)
@click.option(
    "--store",
    "store_url",
    metavar="URL",
    default=None,
    help="Keep transcripts in PostgreSQL (postgresql://…) instead of the home's JSONL files "
    "(default: the store.url setting).",
)
@click.version_option(version=__version__, prog_name="segue", message="%(prog)s %(version)s")
@click.pass_context
def cli(
    ctx: click.Context, home: Path | None, workspace_id: str | None, store_url: str | None
) -> None:
    """segue: an agent harness whose context engine never loses a conversation."""
    wid = workspace_id if workspace_id is not None else derive_workspace_id(Path.cwd())
    try:
        validate_workspace_id(wid)
        if store_url is not None:
            check_store_url(store_url)
    except UsageError as exc:
        raise click.UsageError(exc.message) from None
    ctx.obj = CliContext(
        home=home if home is not None else default_home(),
        workspace_id=wid,
        store_option=store_url,
    )


history.add_command(history_tool)
history.add_command(migrate_cmd)
cli.add_command(history)
cli.add_command(settings_group)
cli.add_command(store_group)
cli.add_command(tokens)
cli.add_command(run)
cli.add_command(clear)
cli.add_command(compact)
cli.add_command(chat)
cli.add_command(demo)
cli.add_command(workspaces)
cli.add_command(mcp_group)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit code (for tests and the console script)."""
    try:
        cli.main(args=argv, prog_name="segue", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("Aborted!", err=True)
        return 1
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
