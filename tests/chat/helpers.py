"""Driving :class:`segue._chat.ChatLoop` with scripted input, a real store and the scripted
provider in a temporary SEGUE_HOME."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from segue._chat import ChatLoop, SessionMaker
from segue._chat.loop import Guard, direct
from segue._events import Event, EventSink
from segue._history import HistoryStore
from segue._messages import Row
from segue._session import Session
from segue._workspace import Layout

#: A Ctrl-C at the prompt, in a scripted input.
CTRL_C = object()


def write_script(
    path: Path, responses: Sequence[Mapping[str, Any]], *, context_window: int = 8000
) -> Path:
    path.write_text(
        json.dumps(
            {"contextWindow": context_window, "encoding": "o200k_base", "responses": responses}
        )
    )
    return path


class Keyboard:
    """``read_line`` over a list of lines; CTRL_C raises KeyboardInterrupt, the end EOFError."""

    def __init__(self, lines: Iterable[object]) -> None:
        self._lines = list(lines)
        self.prompts: list[str] = []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if not self._lines:
            raise EOFError
        line = self._lines.pop(0)
        if line is CTRL_C:
            raise KeyboardInterrupt
        assert isinstance(line, str)
        return line


@dataclass
class Source:
    """The production SessionMaker, with a hook that sees every event (and the session)."""

    maker: SessionMaker
    on_event_hook: Callable[[Event, Session], None] | None = None
    opened: list[Session] = field(default_factory=list)

    def open(
        self, agent_name: str | None, on_event: EventSink, keep: Session | None = None
    ) -> Session:
        holder: list[Session] = []

        def sink(event: Event) -> None:
            on_event(event)
            if self.on_event_hook is not None:
                self.on_event_hook(event, holder[0])

        session = self.maker.open(agent_name, sink, keep=keep)
        holder.append(session)
        self.opened.append(session)
        return session

    def agents(self) -> list[str]:
        return self.maker.agents()


@dataclass
class Chat:
    tmp: Path
    layout: Layout
    script: Path
    output: list[str] = field(default_factory=list)

    def source(self, hook: Callable[[Event, Session], None] | None = None) -> Source:
        maker = SessionMaker(self.layout, self.tmp / "work", f"scripted:{self.script}", False)
        return Source(maker, hook)

    def run(
        self,
        lines: Iterable[object],
        *,
        interactive: bool = False,
        source: Source | None = None,
        guard: Guard = direct,
        agent_name: str | None = None,
    ) -> tuple[int, Keyboard]:
        keyboard = Keyboard(lines)
        loop = ChatLoop(
            source or self.source(),
            read_line=keyboard,
            write=self.output.append,
            interactive=interactive,
            color=False,
            agent_name=agent_name,
            guard=guard,
        )
        return loop.run(), keyboard

    @property
    def text(self) -> str:
        return "".join(self.output)

    def rows(self) -> list[Row]:
        return list(HistoryStore(self.layout, durable=False).rows())

    def settings(self, **values: Any) -> None:
        path = self.layout.home / "settings.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))


def chat(
    tmp: Path, responses: Sequence[Mapping[str, Any]], *, context_window: int = 8000
) -> Chat:
    (tmp / "work").mkdir(exist_ok=True)
    script = write_script(tmp / "script.json", responses, context_window=context_window)
    return Chat(tmp, Layout(tmp / "home", "ws"), script)


def texts(rows: Sequence[Row]) -> list[str]:
    return [row.text for row in rows]


def meters(text: str) -> list[str]:
    return re.findall(r"\d+% · [a-z ]+\d*%?", text)
