"""The chat loop: read a line, run it (a message or a slash command), print what happens.

The loop never touches the terminal itself: it reads through ``read_line(prompt)`` (which
raises EOFError at the end of input and KeyboardInterrupt on Ctrl-C at the prompt) and writes
through ``write(text)``, and it runs work that Ctrl-C may interrupt through a ``guard`` (see
:mod:`segue._chat.interrupt`; :func:`direct` in tests). That keeps it testable with scripted
input.

Invariants:

* Machine messages (the loop's own lines, notices, dividers) are prefixed ``[segue]`` or drawn
  as dividers and styled apart; the model's words are printed as they stream, the user's as
  typed (R9).
* A failed command or turn (any :class:`~segue._errors.SegueError`) is reported on one line and
  the loop goes on; the Session is only ever replaced by a fully built one.
* End of input leaves with status 0; two Ctrl-C in a row at the prompt (an interrupted turn
  counts as the first) leave with 130, as a program stopped by SIGINT does. While a task
  runs (R41), Ctrl-C stops the task and the turn goes on with its result; the next one stops
  the turn. A Ctrl-C while a turn is stopping quits at once (130).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, TypeVar

import click

from segue._chat import commands as cmd
from segue._chat.approval import (
    APPROVAL_PROMPT,
    choices,
    headline,
    parse_answer,
    preview_lines,
    remembered,
)
from segue._chat.interrupt import OnInterrupt, QuitNow, interrupts_raise, stopping_task
from segue._chat.meter import meter_text, reported_usage
from segue._chat.wrap import WordWrap
from segue._context.active import active_rows
from segue._errors import SegueError
from segue._events import EventSink
from segue._policy.approval import Mode, parse_mode
from segue._providers.request import ProviderRequest
from segue._render.terminal import Renderer, divider
from segue._session import Session
from segue._session.admission import Cancellation
from segue._session.turn import INTERRUPTED_REPLY
from segue._settings import (
    anchor_model_path,
    load_settings,
    parse_cli_value,
    settings_path,
    update_settings,
)
from segue._tokens import approximate_request
from segue._tools.gate import Answer, ApprovalGate, ApprovalRequest, Approver

T = TypeVar("T")

ReadLine = Callable[[str], str]
Write = Callable[[str], None]

EXIT_OK = 0
#: The conventional status of a program stopped by SIGINT.
EXIT_INTERRUPTED = 130


class Guard(Protocol):
    def __call__(
        self,
        work: Callable[[], T],
        on_interrupt: OnInterrupt,
        notify: Callable[[str], None],
    ) -> T: ...


def direct(work: Callable[[], T], on_interrupt: OnInterrupt, notify: Callable[[str], None]) -> T:
    """Run ``work`` on the calling thread; nothing can interrupt it (tests, library use)."""
    return work()


class SessionSource(Protocol):
    def open(
        self, agent_name: str | None, on_event: EventSink, keep: Session | None = None
    ) -> Session: ...

    def agents(self) -> list[str]: ...


class _Leave(Exception):
    """Control flow: leave the loop with ``status``."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


class ChatLoop:
    def __init__(
        self,
        sessions: SessionSource,
        *,
        read_line: ReadLine,
        write: Write,
        interactive: bool,
        color: bool,
        agent_name: str | None = None,
        guard: Guard = direct,
        approver: Approver | None = None,
        width: int | None = None,
    ) -> None:
        """``approver`` asks about a tool call that needs approval (R38); the default asks
        through ``read_line`` (the full-screen chat passes a dialog). With ``width`` (the
        terminal's), the model's streamed words are wrapped at word boundaries."""
        self.sessions = sessions
        self.read_line = read_line
        self.write = write
        self.interactive = interactive
        self.color = color
        self.guard = guard
        self._approver: Approver = approver if approver is not None else self.approve
        #: ``/approve MODE``: this chat's mode, kept when the session is rebuilt.
        self._mode: Mode | None = None
        self.renderer = Renderer(
            out=WordWrap(write, width), err=lambda s: write(s + "\n"), color=color,
            show_usage=False,
        )
        self._agent_name = agent_name
        self._session: Session | None = None
        #: A Ctrl-C just happened (at the prompt, or it interrupted a turn): one more leaves.
        self._armed = False

    @property
    def session(self) -> Session:
        if self._session is None:
            raise RuntimeError("the chat has not started")
        return self._session

    # -- output ------------------------------------------------------------------------------------

    def _style(self, text: str, **style: Any) -> str:
        return click.style(text, **style) if self.color else text

    def say(self, text: str, **style: Any) -> None:
        """One machine message (R9: never styled like the user's or the model's words)."""
        self.renderer.finish()
        self.write(self._style(f"[segue] {text}", **({"dim": True} | style)) + "\n")

    def _notify(self, text: str) -> None:
        # Called from the SIGINT handler, possibly in the middle of a streamed line.
        self.write("\n")
        self.say(text, fg="yellow")

    def meter(self) -> str:
        s = self.session
        window = s.window()
        request = ProviderRequest(
            s.build_system(), tuple(active_rows(window)), s.advertised_tools()
        )
        # The meter is display only: with approximateCounting it may use characters / 4;
        # the engine's guards always count with the real encoding (R17).
        if load_settings(settings_path(s.layout.home)).approximate_counting:
            counted = approximate_request(request.system, request.rows, request.tools).tokens
        else:
            counted = s.count(request)
        tokens = max(counted, reported_usage(window))
        return meter_text(
            s.budget.percent(tokens),
            s.config.threshold,
            experiment=s.config.experiment,
            limit=s.budget.limit,
        )

    def _prompt(self) -> str:
        if not self.interactive:
            return ""
        text = f"[{self.meter()}]"
        if self.color:
            # \001 … \002 tell readline that the escape codes take no room on the line.
            text = f"\001\033[36m\002{text}\001\033[0m\002"
        return text + " › "

    # -- the loop ----------------------------------------------------------------------------------

    def run(self) -> int:
        """Chat until /exit, end of input or a double Ctrl-C; returns the exit status."""
        self._session = self._attach(self.sessions.open(self._agent_name, self.renderer))
        s = self.session
        self.say(
            f"segue chat · workspace {s.layout.workspace_id} · model {s.provider.model} · "
            f"agent {s.agent.name} — /help for commands, Ctrl-D to leave"
        )
        try:
            while True:
                self._step()
        except _Leave as leave:
            return leave.status
        finally:
            self.session.close()  # MCP servers end with the chat

    def _step(self) -> None:
        try:
            line = self.read_line(self._prompt())
        except EOFError:
            if self.interactive:
                self.write("\n")
            raise _Leave(EXIT_OK) from None
        except KeyboardInterrupt:
            self.write("\n")
            if self._armed:
                raise _Leave(EXIT_INTERRUPTED) from None
            self._armed = True
            self.say("Ctrl-C again or Ctrl-D to leave; /help lists the commands")
            return
        self._armed = False
        command = cmd.parse(line)
        if command is None:
            return
        try:
            self._dispatch(command)
        except QuitNow:
            self.say("quitting; every settled step is on disk", fg="yellow")
            raise _Leave(EXIT_INTERRUPTED) from None
        except KeyboardInterrupt:
            # Ctrl-C during a command that is not a turn (no handler is installed then).
            self.write("\n")
            self._armed = True
            self.say("interrupted", fg="yellow")
        except SegueError as exc:
            self.say(f"error: {exc.cli_message}", fg="red", dim=False)

    def _dispatch(self, command: cmd.Command) -> None:
        match command:
            case cmd.Message(text):
                self._send(text)
            case cmd.Clear(soft=True):
                self._clear_soft()
            case cmd.Clear(soft=False):
                self._clear_hard()
            case cmd.Compact():
                self._compact()
            case cmd.SettingsShow():
                self._settings_show()
            case cmd.SettingsSet(key, value):
                self._settings_set(key, value)
            case cmd.AgentShow():
                self._agent_show()
            case cmd.AgentSwitch(name):
                self._agent_switch(name)
            case cmd.Approve(mode):
                self._approve_command(mode)
            case cmd.Help():
                self._help()
            case cmd.Exit():
                raise _Leave(EXIT_OK)
            case cmd.Unknown(name):
                self.say(f"unknown command {name}; /help lists the commands", fg="red")
            case cmd.Invalid(usage):
                self.say(f"usage: {usage}", fg="red")

    # -- approval (R38) ----------------------------------------------------------------------------

    def _attach(self, session: Session) -> Session:
        """The session, with this chat as the person its approval gate asks. A chat reading
        piped input has nobody to ask (the next line is the next message, not an answer), so
        there a call that would ask is denied, as in ``segue run``."""
        gate = session.approval
        approver = self._approver if self.interactive else None
        mode = self._mode if self._mode is not None else gate.mode
        session.approval = ApprovalGate(mode, gate.rules, approver, unattended=gate.unattended)
        return session

    def _approve_command(self, mode: str | None) -> None:
        s = self.session
        if mode is not None:
            self._mode = parse_mode(mode)
            self._attach(s)
        gate = s.approval
        self.say(f"approval mode {gate.mode.value} (ask, auto-edit, full or deny: /approve MODE)")
        rules = gate.rules.rules() if gate.rules is not None else ()
        where = f" in {gate.rules.path}" if gate.rules is not None else ""
        if not rules:
            self.say(f"no remembered rules{where}")
            return
        self.say(f"remembered rules{where} (the last match wins):")
        for rule in rules:
            self.say(f"  {rule.action.value:<5} {rule.pattern}")

    def approve(self, request: ApprovalRequest) -> Answer:
        """Show the exact call and read y / n / a. Ctrl-C (or end of input) at the question
        is no, and stops the turn at its next safe point."""
        self.say(headline(request), fg="yellow", dim=False)
        for line in preview_lines(request):
            self.write("    " + self._style(line.text, **_TONES[line.tone]) + "\n")
        self.say(choices(request))
        try:
            with interrupts_raise():
                typed = self.read_line(APPROVAL_PROMPT)
        except (EOFError, KeyboardInterrupt):
            self.write("\n")
            # A task's question: its Ctrl-C stops the task; the turn's stops the turn.
            said = interrupt_text(self.session.cancellation)
            if said is not None:
                self.say(said, fg="yellow")
            typed = ""
        answer = parse_answer(typed)
        if answer is Answer.ALWAYS:
            self.say(remembered(request))
        elif answer is Answer.NO:
            self.say("not run; the model is told it was declined")
        return answer

    # -- a turn ------------------------------------------------------------------------------------

    def _send(self, text: str) -> None:
        session = self.session
        # Made before the Ctrl-C handler is installed and handed to the turn, so a Ctrl-C
        # that lands before the engine starts is not lost.
        cancellation = Cancellation()
        result = self.guard(
            lambda: session.send(text, cancellation=cancellation),
            lambda: interrupt_text(cancellation),
            self._notify,
        )
        self.renderer.finish()
        if result.status == "paused" and cancellation.cancelled:
            self._armed = True
            if result.reason != INTERRUPTED_REPLY:  # that notice has said it all already
                self.say("turn interrupted; the steps that settled are kept", fg="yellow")
        if not self.interactive:
            self.say(self.meter(), fg="cyan")

    # -- commands ----------------------------------------------------------------------------------

    def _clear_soft(self) -> None:
        if self.session.clear_soft():
            self.write(self._style(divider("Context cleared"), fg="yellow") + "\n")
            self.say("the next message starts a fresh context window; earlier ones stay on disk")
        else:
            self.say("nothing to clear: the context window is already empty")

    def _clear_hard(self) -> None:
        workspace = self.session.layout.workspace_id
        self.say(
            f"/clear destroys the whole transcript of workspace {workspace!r}; it cannot be "
            "undone (/clear --soft keeps it)",
            fg="red",
            dim=False,
        )
        try:
            answer = self.read_line("Destroy it? [y/N] " if self.interactive else "")
        except (EOFError, KeyboardInterrupt):
            self.write("\n")
            answer = ""
        if answer.strip().lower() not in ("y", "yes"):
            self.say("not cleared")
            return
        self.session.clear_hard()
        self.say("transcript destroyed; the next message starts a new conversation")

    def _compact(self) -> None:
        session = self.session
        window_id = self.guard(
            session.compact,
            lambda: None,  # a compaction commits whole or not at all; it cannot stop midway
            self._notify,
        )
        self.say(f"compacted: the conversation continues in {window_id}")

    def _settings_show(self) -> None:
        s = self.session
        path = settings_path(s.layout.home)
        settings = load_settings(path)
        self.say(f"settings: {path}")
        for key, value in settings.effective().items():
            mark = "" if key in settings.values else "  (default)"
            self.say(f"  {key} = {'(unset)' if value is None else _json(value)}{mark}")
        label = meter_text(
            0, s.config.threshold, experiment=s.config.experiment, limit=s.budget.limit
        )
        self.say(
            f"this session: model {s.provider.model}, agent {s.agent.name}, context "
            f"{s.budget.limit} tokens, {label.removeprefix('0% · ')}"
        )

    def _settings_set(self, key: str, value: str) -> None:
        s = self.session
        parsed = anchor_model_path(key, parse_cli_value(value), Path.cwd())
        written = update_settings(
            settings_path(s.layout.home), lambda cur: cur.with_value(key, parsed)
        )
        current = written.get(key)
        self.say(f"{key} = {'(unset)' if current is None else _json(current)}")
        # The next turn runs with the new settings (threshold, experiment, model).
        self._session = self._attach(self.sessions.open(s.agent.name, self.renderer, keep=s))

    def _agent_show(self) -> None:
        self.say(
            f"agent {self.session.agent.name} (available: {', '.join(self.sessions.agents())})"
        )

    def _agent_switch(self, name: str) -> None:
        s = self.session
        self._session = self._attach(self.sessions.open(name, self.renderer, keep=s))
        self.say(f"agent {self.session.agent.name} · model {self.session.provider.model}")

    def _help(self) -> None:
        width = max(len(usage) for usage, _ in cmd.HELP)
        for usage, what in cmd.HELP:
            self.say(f"{usage:<{width}}  {what}")


def interrupt_text(cancellation: Cancellation) -> str | None:
    """One Ctrl-C in a turn: stop its running task (the notice saying so), or the turn
    itself (None)."""
    task = cancellation.interrupt()
    return None if task is None else stopping_task(task.task_id, task.agent)


_TONES: dict[str, dict[str, Any]] = {
    "plain": {"bold": True},
    "added": {"fg": "green"},
    "removed": {"fg": "red"},
    "hunk": {"fg": "cyan"},
    "note": {"dim": True},
}


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)

