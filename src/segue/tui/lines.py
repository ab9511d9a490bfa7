"""What the transcript view shows, as plain values (pure; no Textual here).

A :class:`Line` is one entry of the view: who or what it speaks for (``kind``) and its text.
The kinds keep R9's distinction visible: ``user`` is only ever what the person typed,
``assistant`` the model's words, and everything segue says itself (notices, warnings, tool
activity, dividers) is ``segue``, ``tool`` or ``divider``, which the view styles apart.

History comes from :func:`segue.views.windows.walk` (the same projection ``segue history`` and
the exports use: the lead-in and other hidden rows never show, boundaries become dividers);
live turns come from engine events, written the way :class:`segue.cli.render.Renderer` writes
them in the line chat.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from segue.chat.meter import due
from segue.cli.render import NEW_PREFIX_NOTE, ROLLOVER_DIVIDER
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
from segue.messages import Row
from segue.views.export import DIVIDERS
from segue.views.project import Segment
from segue.views.windows import Item, walk

LineKind = Literal["user", "assistant", "segue", "tool", "divider"]

_PROMPT = re.compile(r"\[(.+)\] › ", re.DOTALL)

#: How many history entries the view loads at start: a transcript of any size opens quickly,
#: and the rest is one ``segue history export`` away.
HISTORY_LIMIT = 400


@dataclass(frozen=True)
class Line:
    kind: LineKind
    text: str


def machine(text: str) -> Line:
    """One of segue's own messages, prefixed as in the line chat."""
    return Line("segue", f"[segue] {text}")


def _item_lines(item: Item) -> list[Line]:
    label = item.view.label
    out: list[Line] = []
    texts: list[str] = []

    def flush() -> None:
        if texts:
            kind: LineKind = (
                "user" if label == "user" else "assistant" if label == "assistant" else "segue"
            )
            out.append(Line(kind, "\n".join(texts)))
            texts.clear()

    for segment in item.view.segments:
        if segment.kind in ("tool", "output"):
            flush()
            out.append(Line("tool", _tool_text(segment)))
        elif segment.kind == "text" and not item.view.rejected:
            texts.append(segment.text)
        else:
            # Notes, media placeholders and rejected input are segue's annotations.
            flush()
            out.append(Line("segue", segment.text))
    flush()
    return out


def _tool_text(segment: Segment) -> str:
    if segment.kind == "tool":
        # "[tool NAME] {input}", as the live view writes a ToolStarted event.
        name, _, given = segment.text.removeprefix("[tool ").partition("] ")
        return f"  ⚙ {call_text(name, _json_or_text(given))}"
    return result_text(_json_or_text(segment.text))


def _json_or_text(text: str) -> Any:
    """The projection gives a call's input and output as JSON text; read as a live event."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def history_lines(rows: Iterable[Row], limit: int = HISTORY_LIMIT) -> list[Line]:
    """The newest ``limit`` entries of a transcript, oldest first, after a note of how many
    earlier entries were left out. One forward pass; memory is bounded by ``limit``."""
    kept: deque[Line] = deque(maxlen=limit)
    total = 0
    for event in walk(rows):
        if isinstance(event, Item):
            lines = _item_lines(event)
        elif event.kind == "root":
            continue
        else:
            lines = [Line("divider", DIVIDERS[event.kind])]
        total += len(lines)
        kept.extend(lines)
    skipped = total - len(kept)
    head = [machine(f"{skipped} earlier entries not shown (segue history export has them all)")]
    return (head if skipped else []) + list(kept)


def event_lines(event: Event) -> list[Line]:
    """The entries an engine event adds. Streamed text and the meter are not entries (the
    view appends the one and shows the other in its status line), so they give none."""
    if isinstance(event, AssistantText | StepUsage):
        return []
    if isinstance(event, ToolStarted):
        return [Line("tool", f"  ⚙ {call_text(event.name, event.input)}")]
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


def prompt_meter(prompt: str) -> str | None:
    """The meter in the chat loop's prompt ("[42% · rolls over by 75%] › "), or None when the
    loop is asking a question instead (such as /clear's confirmation)."""
    match = _PROMPT.fullmatch(prompt)
    return match.group(1) if match else None


def output_line(text: str) -> Line | None:
    """One line the chat loop wrote: a divider, one of its ``[segue]`` messages, or (never
    expected, since the view renders events itself) other text, shown as segue's."""
    stripped = text.strip()
    if not stripped:
        return None
    if stripped.startswith("─") and stripped.endswith("─"):
        return Line("divider", stripped.strip("─ "))
    return Line("segue", stripped)


def usage_meter(event: StepUsage) -> str:
    """The meter after a provider step, in the line chat's words."""
    return due(event.percent, event.label.lower(), figure=event.figure()) + event.cache_note()
