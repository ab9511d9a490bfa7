"""``segue chat``: the interactive session in a terminal (SPEC.md §5).

Only terminal plumbing lives here: line editing (readline, when the interpreter has it and
stdin is a terminal), colour, and Ctrl-C handling through
:func:`segue.chat.interrupt.run_interruptible`. The loop itself is :class:`segue.chat.ChatLoop`.
With stdin not a terminal, each line of input is one message or command and no prompt is
printed; the context meter follows each turn instead.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from segue.chat import ChatLoop, SessionMaker, run_interruptible

if TYPE_CHECKING:
    from segue.cli.context import CliContext


def _enable_line_editing() -> None:
    try:
        # Importing readline is what gives input() editing and in-session history.
        import readline  # noqa: F401
    except ImportError:
        # Some interpreters are built without it; input() still works, only unedited.
        return


def _read_tty(prompt: str) -> str:
    return input(prompt)


def _read_pipe(_prompt: str) -> str:
    line = sys.stdin.readline()
    if not line:
        raise EOFError
    return line


def _write(text: str) -> None:
    # Straight to the descriptor, unbuffered: the Ctrl-C handler writes too, and may run
    # while another write is under way (a buffered stream would fail as reentrant).
    data = text.encode(sys.stdout.encoding or "utf-8", errors="replace")
    fd = sys.stdout.fileno()
    while data:
        data = data[os.write(fd, data) :]


def _wants_color() -> bool:
    return (
        sys.stdout.isatty() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"
    )


@click.command("chat")
@click.option("-m", "--model", default=None, help="Model as provider:name (e.g. scripted:s.json).")
@click.option("--agent", "agent_name", default=None, help="exec, plan, explore or a custom agent.")
@click.option(
    "--tui", is_flag=True, help="Full-screen terminal UI (needs the tui extra: segue[tui])."
)
@click.pass_obj
def chat(obj: CliContext, model: str | None, agent_name: str | None, tui: bool) -> None:
    """Talk with the agent, one message per line.

    \b
    Slash commands:
      /clear --soft        start a fresh context window (everything stays on disk)
      /clear               destroy the whole transcript (asks first)
      /compact             summarize the context window
      /settings [set K V]  show or change settings
      /agent [NAME]        show or switch the agent
      /help, /exit         (end of input, Ctrl-D, also leaves)

    Ctrl-C stops a running turn at its next safe point; steps that settled stay on disk.
    Ctrl-C twice at the prompt leaves. With --tui the same chat runs full-screen (Escape
    also stops a turn; Ctrl-D or Ctrl-Q leaves).
    """
    if tui:
        # Imported here so that the line chat never loads Textual.
        from segue.tui import run_tui

        sys.exit(run_tui(SessionMaker(obj.layout, Path.cwd(), model), agent_name=agent_name))
    interactive = sys.stdin.isatty()
    if interactive:
        _enable_line_editing()
    loop = ChatLoop(
        SessionMaker(obj.layout, Path.cwd(), model),
        read_line=_read_tty if interactive else _read_pipe,
        write=_write,
        interactive=interactive,
        color=_wants_color(),
        agent_name=agent_name,
        guard=run_interruptible,
    )
    sys.exit(loop.run())
