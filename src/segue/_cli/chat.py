"""``segue chat``: the interactive session in a terminal (SPEC.md §5).

Only terminal plumbing lives here: line editing (readline, when the interpreter has it and
stdin is a terminal), colour, and Ctrl-C handling through
:func:`segue._chat.interrupt.run_interruptible`. The loop itself is :class:`segue._chat.ChatLoop`.
With stdin not a terminal, each line of input is one message or command and no prompt is
printed; the context meter follows each turn instead.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from segue._chat import ChatLoop, SessionMaker, run_interruptible
from segue._chat.presence import hold_chat
from segue._cli.run import UNATTENDED_CLI
from segue._policy.approval import MODES, Mode, parse_mode
from segue._render.terminal import no_color

if TYPE_CHECKING:
    from segue._cli.context import CliContext


def _enable_line_editing() -> None:
    try:
        # Importing readline is what gives input() editing and in-session history.
        import readline
    except ImportError:
        # Some interpreters are built without it; input() still works, only unedited.
        return
    # A bracketed paste is one message: readline takes the pasted text, newlines included,
    # as one line (GNU readline >= 8.1 has it on by default; an older one or an inputrc may
    # not). libedit ignores the setting.
    readline.parse_and_bind("set enable-bracketed-paste on")


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
        sys.stdout.isatty() and not no_color() and os.environ.get("TERM") != "dumb"
    )


@click.command("chat")
@click.option("-m", "--model", default=None, help="Model as provider:name (e.g. scripted:s.json).")
@click.option("--agent", "agent_name", default=None, help="exec, plan, explore or a custom agent.")
@click.option(
    "--tui", is_flag=True, help="Full-screen terminal UI (needs the tui extra: segue[tui])."
)
@click.option(
    "--approve",
    type=click.Choice(MODES),
    default=None,
    help="Approval for tools that change the machine: ask (the default: show the call, "
    "answer y / n / a for always), auto-edit, full or deny.",
)
@click.pass_obj
def chat(
    obj: CliContext, model: str | None, agent_name: str | None, tui: bool, approve: str | None
) -> None:
    """Talk with the agent, one message per line.

    \b
    Slash commands:
      /clear --soft        start a fresh context window (everything stays on disk)
      /clear               destroy the whole transcript (asks first)
      /compact             summarize the context window
      /settings [set K V]  show or change settings
      /agent [NAME]        show or switch the agent
      /approve [MODE]      show approval mode and rules, or change the mode
      /help, /exit         (end of input, Ctrl-D, also leaves)

    A pasted block of lines is one message. Before bash, file_write or file_edit runs, the
    chat shows the exact command or diff and asks: y runs it once, n does not (the model is
    told), a always allows that pattern in this workspace. With input piped in, nobody can be
    asked, so such calls are denied unless --approve says otherwise.

    One chat per workspace: a second chat on the same workspace says which process holds it.

    Ctrl-C stops a running turn at once (a streaming reply keeps what it said so far); steps
    that settled stay on disk. While a sub-agent's task runs, Ctrl-C stops the task alone and
    the turn goes on with its result; the next Ctrl-C stops the turn.
    Ctrl-C twice at the prompt leaves. With --tui the same chat runs full-screen (Escape
    also stops a turn; Ctrl-D or Ctrl-Q leaves).
    """
    mode = parse_mode(approve) if approve is not None else None
    obj.note_earlier_workspace()
    with hold_chat(obj.layout):
        sys.exit(_chat(obj, model, agent_name, tui=tui, mode=mode))


def _chat(
    obj: CliContext, model: str | None, agent_name: str | None, *, tui: bool, mode: Mode | None
) -> int:
    if tui:
        # Imported here so that the line chat never loads Textual.
        from segue._tui import run_tui

        maker = SessionMaker(
            obj.layout, Path.cwd(), model, store_url=obj.store_url, approval=mode
        )
        return run_tui(maker, agent_name=agent_name)
    interactive = sys.stdin.isatty()
    if interactive:
        _enable_line_editing()
    loop = ChatLoop(
        SessionMaker(obj.layout, Path.cwd(), model, store_url=obj.store_url, approval=mode,
                     unattended=UNATTENDED_CLI),
        read_line=_read_tty if interactive else _read_pipe,
        write=_write,
        interactive=interactive,
        color=_wants_color(),
        agent_name=agent_name,
        guard=run_interruptible,
        width=shutil.get_terminal_size().columns if interactive else None,
    )
    return loop.run()
