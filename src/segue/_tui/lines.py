"""What the transcript view shows, as plain values (pure; no Textual here).

A :class:`~segue._render.lines.Line` is one entry of the view (who or what it speaks for, and
its text); :mod:`segue._render.lines` defines them and the entries engine events add.

History comes from :func:`segue._views.windows.walk` (the same projection ``segue history`` and
the exports use: the lead-in and other hidden rows never show, boundaries become dividers);
live turns come from engine events, in the words the line chat's
:class:`segue._render.terminal.Renderer` writes them with
(:func:`~segue._render.lines.event_lines`).
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Iterable
from typing import Any

from segue._chat.meter import due
from segue._events import StepUsage
from segue._messages import Row
from segue._render.lines import Line, LineKind, machine, tool_call_line
from segue._render.tool_text import result_text
from segue._views.export import DIVIDERS
from segue._views.project import Segment
from segue._views.windows import Item, walk

_PROMPT = re.compile(r"\[(.+)\] › ", re.DOTALL)

#: How many history entries the view loads at start: a transcript of any size opens quickly,
#: and the rest is one ``segue history export`` away.
HISTORY_LIMIT = 400


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
        return tool_call_line(name, _json_or_text(given)).text
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
