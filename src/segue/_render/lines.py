"""What an engine event adds to a transcript, as plain values (pure; no terminal, no Textual).

A :class:`Line` is one entry: who or what it speaks for (``kind``) and its text. The kinds keep
R9's distinction visible: ``user`` is only ever what the person typed, ``assistant`` the
model's words, and everything segue says itself (notices, warnings, tool activity, dividers)
is ``segue``, ``tool`` or ``divider``, which every view styles apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from segue._events import (
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
from segue._render.tool_text import call_text, result_text, task_finished_text, task_started_text

LineKind = Literal["user", "assistant", "segue", "tool", "divider"]

ROLLOVER_DIVIDER = "Context window rollover"
#: A new window is a new request prefix: the provider's prompt cache starts over.
NEW_PREFIX_NOTE = "a new prompt-cache prefix starts"


@dataclass(frozen=True)
class Line:
    kind: LineKind
    text: str


def machine(text: str) -> Line:
    """One of segue's own messages, prefixed ``[segue]``."""
    return Line("segue", f"[segue] {text}")


def tool_call_line(name: str, args: object) -> Line:
    return Line("tool", f"  ⚙ {call_text(name, args)}")


def event_lines(event: Event) -> list[Line]:
    """The entries an engine event adds. Streamed text and the usage meter are not entries
    (each view shows them its own way), so they give none."""
    if isinstance(event, AssistantText | StepUsage):
        return []
    if isinstance(event, ToolStarted):
        return [tool_call_line(event.name, event.input)]
    if isinstance(event, ToolFinished):
        return [Line("tool", result_text(event.output))]
    if isinstance(event, RolledOver):
        return [
            Line("divider", ROLLOVER_DIVIDER),
            machine(
                f"{event.previous_window_id} → {event.window_id} ({event.reason}, "
                f"{event.context_tokens} tokens sealed; earlier windows stay on disk; "
                f"{NEW_PREFIX_NOTE})"
            ),
        ]
    if isinstance(event, Warned):
        return [machine(f"context at {event.percent}%: notes offered")]
    if isinstance(event, Compacted):
        return [Line("divider", f"Context compacted ({event.reason})")]
    if isinstance(event, Notice):
        return [machine(event.text)]
    if isinstance(event, TaskStarted):
        return [machine(task_started_text(event.task_id, event.agent, event.prompt))]
    if isinstance(event, TaskFinished):
        return [machine(task_finished_text(event.task_id, event.agent, event.status,
                                           event.reason, event.rollovers))]
    return []
