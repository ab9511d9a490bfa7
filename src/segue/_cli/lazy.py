"""A click group whose subcommands are imported only when one of them runs.

``segue --help`` lists every command without importing any of them: a command's module
(and what it pulls in: providers, the history store, the index, the TUI) loads when that
command is resolved. The one-line help shown in the listing comes from the table, so it is
kept in step with each command's docstring by tests/cli/test_startup.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import import_module
from typing import Any

import click


class Lazy:
    """Where a subcommand lives (``"segue._cli.run:run"``) and the first paragraph of its
    help, shown by ``--help`` without importing it (empty: import it to ask)."""

    __slots__ = ("help", "target")

    def __init__(self, target: str, help: str = "") -> None:
        # A plain class, not a dataclass: this module is on the path of `segue --help`.
        self.target = target
        self.help = help

    def load(self) -> click.Command:
        module, _, attr = self.target.partition(":")
        command = getattr(import_module(module), attr)
        if not isinstance(command, click.Command):
            raise TypeError(f"{self.target} is not a click command")
        return command


class LazyGroup(click.Group):
    """A :class:`click.Group` with extra subcommands named in ``lazy`` (name → :class:`Lazy`)."""

    def __init__(self, *args: Any, lazy: Mapping[str, Lazy] | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.lazy: dict[str, Lazy] = dict(lazy or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in self.lazy:
            self.add_command(self.lazy[cmd_name].load(), cmd_name)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """As click's, but a command not imported yet is described from the table."""
        rows: list[tuple[str, str | None]] = []  # (name, help text) or (name, None): load it
        for name in self.list_commands(ctx):
            entry = self.lazy.get(name)
            if name not in self.commands and entry is not None and entry.help:
                rows.append((name, entry.help))
                continue
            cmd = self.get_command(ctx, name)
            if cmd is not None and not cmd.hidden:
                rows.append((name, None))
        if not rows:
            return
        limit = formatter.width - 6 - max(len(name) for name, _ in rows)
        listing = [
            (
                name,
                # click's own shortening, through a command that only holds the text (its
                # helper for it is private from click 8.5 on)
                click.Command(name, help=text).get_short_help_str(limit).strip()
                if text is not None
                else self.commands[name].get_short_help_str(limit),
            )
            for name, text in rows
        ]
        with formatter.section("Commands"):
            formatter.write_dl(listing)
