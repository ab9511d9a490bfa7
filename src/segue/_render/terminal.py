"""Engine events written to a terminal, shared by ``run``, ``chat`` and ``demo``.

Machine messages (warnings, notices, dividers) are styled apart from the model's and the
user's words (R9): they are dim or coloured and always prefixed, never plain text. Their
words come from :func:`segue._render.lines.event_lines`, the entries the full-screen chat shows.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

import click

from segue._events import (
    AssistantText,
    Compacted,
    Event,
    Notice,
    RolledOver,
    StepUsage,
    TaskFinished,
    TaskStarted,
    Warned,
)
from segue._render.lines import LineKind, event_lines

#: How the lines of an event are styled, by the event and the line's kind (tool activity is
#: dim whatever the event).
_STYLES: dict[type[Event], dict[LineKind, dict[str, Any]]] = {
    RolledOver: {"divider": {"fg": "yellow", "bold": True}, "segue": {"fg": "yellow"}},
    Warned: {"segue": {"fg": "magenta"}},
    Compacted: {"divider": {"fg": "blue"}},
    Notice: {"segue": {"fg": "red"}},
    TaskStarted: {"segue": {"fg": "green"}},
    TaskFinished: {"segue": {"fg": "green"}},
}


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
            return
        if isinstance(event, StepUsage):
            if self._show_usage:
                self._machine(f"  [{event.figure()} · {event.label.lower()}{event.cache_note()}]",
                              fg="cyan")
            return
        styles = _STYLES.get(type(event), {})
        for line in event_lines(event):
            if line.kind == "tool":
                self._machine(line.text, dim=True)
            elif line.kind == "divider":
                self._machine(divider(line.text), **styles.get("divider", {}))
            else:
                self._machine(line.text, **styles.get(line.kind, {}))

    def finish(self) -> None:
        self._end_line()
