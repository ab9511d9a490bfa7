"""``segue`` entry point: global options, the command groups, and error → exit code mapping.

Exit codes (SPEC.md §5): 0 success, 1 runtime failure, 2 bad usage, 3 a context guard
paused or rejected the turn.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from segue._cli.lazy import Lazy, LazyGroup
from segue._version import __version__

# Nothing else is imported up here: `segue --help` loads click and this package's two
# modules only. What a command needs is imported where it is used.

#: Every subcommand: where it lives and its one-line help. A command's module is imported only
#: when that command runs, so `segue --help` and a light command stay fast (the listing's
#: help is checked against each command's docstring by tests/cli/test_startup.py).
COMMANDS: dict[str, Lazy] = {
    "chat": Lazy("segue._cli.chat:chat", "Talk with the agent, one message per line."),
    "clear": Lazy(
        "segue._cli.run:clear",
        "Clear the context. --soft appends a reset (the privacy floor for session_history); "
        "without it the whole transcript of this workspace is destroyed.",
    ),
    "compact": Lazy(
        "segue._cli.run:compact",
        "Summarize the active window into a compaction boundary (works with rollover on too).",
    ),
    "demo": Lazy(
        "segue._cli.demo:demo",
        "Replay a recorded agent run offline until the context rolls over (at least twice), "
        "then have the agent recover a detail of its first window with session_history.",
    ),
    "history": Lazy(
        "segue._cli.history:history",
        "Read, search, export, check and import the workspace's transcript.",
    ),
    "mcp": Lazy(
        "segue._cli.mcp:mcp_group",
        "Speak the Model Context Protocol (needs the extra: pip install 'segue[mcp]').",
    ),
    "run": Lazy("segue._cli.run:run", "Send PROMPT and run the turn to its end."),
    "settings": Lazy(
        "segue._cli.settings:settings_group",
        "Show or change user settings (SEGUE_HOME/settings.json).",
    ),
    "store": Lazy(
        "segue._cli.store:store_group",
        "Set up a shared PostgreSQL store (select it with `segue --store URL` or the "
        "store.url setting).",
    ),
    "tokens": Lazy(
        "segue._cli.tokens:tokens", "Token accounting with the model's real encoding, offline."
    ),
    "workspaces": Lazy(
        "segue._cli.workspaces:workspaces",
        "List the workspaces under the home: id, working dir, rows, size, last activity.",
    ),
}


class SegueGroup(LazyGroup):
    """Turns segue's errors into one clear line on stderr and the documented exit code."""

    def invoke(self, ctx: click.Context) -> object:
        from segue._errors import ContextSignal, MissingSetup, SegueError, UsageError

        try:
            return super().invoke(ctx)
        except SegueError as exc:
            click.echo(f"segue: error: {exc.cli_message}", err=True)
            if isinstance(exc, ContextSignal):
                raise SystemExit(3) from None
            if isinstance(exc, UsageError) and not isinstance(exc, MissingSetup):
                raise SystemExit(2) from None
            raise SystemExit(1) from None
        except OSError as exc:
            # The backstop for a machine fault no layer below turned into a SegueError (a
            # full disk, a read-only home, no access): one line naming the path, exit 1.
            if isinstance(exc, BrokenPipeError):
                raise SystemExit(1) from None
            from segue._fsutil import describe_os_error

            click.echo(f"segue: error: {describe_os_error(exc)}", err=True)
            raise SystemExit(1) from None


@click.group(
    cls=SegueGroup, lazy=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]}
)
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
    help="Workspace id (default: derived from the git repository root, else the current "
    "directory).",
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
    from segue._cli.context import resolve
    from segue._errors import UsageError

    try:
        ctx.obj = resolve(home, workspace_id, store_url)
    except UsageError as exc:
        raise click.UsageError(exc.message) from None


#: The root group's options (SPEC.md §5: they come before the command).
GLOBAL_OPTIONS = frozenset({"--home", "-w", "--workspace", "--store"})


def global_first(args: list[str], option: str) -> str:
    """The command line with each use of the global ``option`` (and its value) moved to the
    front, as a shell would take it: what the user meant."""
    moved: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == option and i + 1 < len(args):
            moved += args[i : i + 2]
            i += 2
            continue
        if arg.startswith(option + "="):
            moved.append(arg)
        else:
            rest.append(arg)
        i += 1
    import shlex

    return shlex.join(["segue", *moved, *rest])


def main(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit code (for tests and the console script)."""
    try:
        cli.main(args=argv, prog_name="segue", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("Aborted!", err=True)
        return 1
    except click.NoSuchOption as exc:
        if exc.option_name not in GLOBAL_OPTIONS:
            exc.show()
            return exc.exit_code
        args = list(sys.argv[1:] if argv is None else argv)
        click.echo(f"segue: error: {exc.option_name} is a global option and goes before the "
                   f"command; try: {global_first(args, exc.option_name)}", err=True)
        return 2
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
