"""Turning engine events into terminal output, shared by ``run``, ``chat`` and ``demo``.

Machine messages (warnings, notices, dividers) are styled apart from the model's and the
user's words (R9): they are dim or coloured and always prefixed, never plain text.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

import click

from segue.cli.tool_text import call_text, result_text, task_finished_text, task_started_text
from segue.events import (
    AssistantText,
    Compacted,
    Event,
    Notice,
    RolledOver,
    StepUsage,
    TaskFinished,
    TaskStarted,
    ToolFinished,
    ToolStarted,
    Warned,
)

ROLLOVER_DIVIDER = "Context window rollover"
#: A new window is a new request prefix: the provider's prompt cache starts over.
NEW_PREFIX_NOTE = "a new prompt-cache prefix starts"


def brief(value: Any, limit: int = 120) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def divider(title: str, width: int = 72) -> str:
    side = max(3, (width - len(title) - 2) // 2)
    return f"{'─' * side} {title} {'─' * side}"


def no_color() -> bool:
    """The user asked for no colour (https://no-color.org: ``NO_COLOR`` set and not empty)."""
    return bool(os.environ.get("NO_COLOR"))


def quiet(_text: str) -> None:
    """Where human output goes when ``--json`` asks for the machine's only."""


class Renderer:
    """Writes events as they come. ``out`` gets the assistant's words, ``err`` the rest."""

    def __init__(
        self,
        out: Callable[[str], None] | None = None,
        err: Callable[[str], None] | None = None,
        *,
        color: bool | None = None,
        show_usage: bool = True,
    ) -> None:
        self._out = out or (lambda s: click.echo(s, nl=False))
        self._err = err or (lambda s: click.echo(s, err=True))
        # Unset: colour where the terminal shows it (click strips it elsewhere), unless NO_COLOR.
        self._color = False if color is None and no_color() else color
        self._show_usage = show_usage
        self._mid_line = False

    def _style(self, text: str, **kw: Any) -> str:
        if self._color is False:
            return text
        return click.style(text, **kw)

    def _machine(self, text: str, **kw: Any) -> None:
        self._end_line()
        self._err(self._style(text, **kw))

    def _end_line(self) -> None:
        if self._mid_line:
            self._out("\n")
            self._mid_line = False

    def __call__(self, event: Event) -> None:
        if isinstance(event, AssistantText):
            self._out(event.text)
            self._mid_line = not event.text.endswith("\n")
        elif isinstance(event, ToolStarted):
            self._machine(f"  ⚙ {call_text(event.name, event.input)}", dim=True)
        elif isinstance(event, ToolFinished):
            self._machine(result_text(event.output), dim=True)
        elif isinstance(event, StepUsage):
            if self._show_usage:
                self._machine(f"  [{event.figure()} · {event.label.lower()}{event.cache_note()}]",
                              fg="cyan")
        elif isinstance(event, RolledOver):
            self._machine(divider(ROLLOVER_DIVIDER), fg="yellow", bold=True)
            self._machine(
                f"[segue] {event.previous_window_id} → {event.window_id} ({event.reason}, "
                f"{event.context_tokens} tokens sealed; earlier windows stay on disk; "
                f"{NEW_PREFIX_NOTE})",
                fg="yellow",
            )
        elif isinstance(event, Warned):
            self._machine(f"[segue] context at {event.percent}%: notes offered", fg="magenta")
        elif isinstance(event, Compacted):
            self._machine(divider(f"Context compacted ({event.reason})"), fg="blue")
        elif isinstance(event, Notice):
            self._machine(f"[segue] {event.text}", fg="red")
        elif isinstance(event, TaskStarted):
            self._machine(f"[segue] {task_started_text(event.task_id, event.agent, event.prompt)}",
                          fg="green")
        elif isinstance(event, TaskFinished):
            line = task_finished_text(event.task_id, event.agent, event.status, event.reason,
                                      event.rollovers)
            self._machine(f"[segue] {line}", fg="green")

    def finish(self) -> None:
        self._end_line()
