"""What a turn reports while it runs, for the edges (CLI, chat, demo) to show.

Events are observations: a turn's outcome never depends on who listens.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class AssistantText:
    """A piece of streamed assistant text."""

    text: str


@dataclass(frozen=True)
class ToolStarted:
    call_id: str
    name: str
    input: Mapping[str, Any] = field(hash=False)


@dataclass(frozen=True)
class ToolFinished:
    call_id: str
    name: str
    output: Any = field(hash=False)


@dataclass(frozen=True)
class StepUsage:
    """The usage meter after a provider step."""

    tokens: int
    limit: int
    percent: int
    label: str
    #: Prompt-cache reads and writes of the step, where the provider reported them.
    cache_read: int | None = None
    cache_write: int | None = None
    #: The provider reported no usage: ``tokens`` is segue's own count of the request.
    estimated: bool = False

    def figure(self) -> str:
        """``42%``, or ``~42% (estimate)`` when the provider reported no usage."""
        return f"~{self.percent}% (estimate)" if self.estimated else f"{self.percent}%"

    def cache_note(self) -> str:
        """`` · cache 1800 read, 120 written`` (empty when the provider said nothing)."""
        if not self.cache_read and not self.cache_write:
            return ""
        return f" · cache {self.cache_read or 0} read, {self.cache_write or 0} written"


@dataclass(frozen=True)
class RolledOver:
    reason: str
    previous_window_id: str
    window_id: str
    context_tokens: int


@dataclass(frozen=True)
class Warned:
    """The once-per-window notes warning was given (a machine message)."""

    percent: int
    text: str


@dataclass(frozen=True)
class Compacted:
    reason: str
    window_id: str


@dataclass(frozen=True)
class Notice:
    """A machine message: a pause, a block, a rejection explained."""

    text: str


@dataclass(frozen=True)
class TaskStarted:
    """A sub-agent took a task (R41); ``task_id`` is its child workspace."""

    task_id: str
    agent: str
    prompt: str


@dataclass(frozen=True)
class TaskFinished:
    """A sub-agent's task ended: ``status`` as a turn's (``completed``, ``paused``, …)."""

    task_id: str
    agent: str
    status: str
    reason: str | None
    rollovers: int

    def to_obj(self) -> dict[str, Any]:
        return {"taskId": self.task_id, "agent": self.agent, "status": self.status,
                "reason": self.reason, "rollovers": self.rollovers}


Event = (
    AssistantText
    | ToolStarted
    | ToolFinished
    | StepUsage
    | RolledOver
    | Warned
    | Compacted
    | Notice
    | TaskStarted
    | TaskFinished
)
EventSink = Callable[[Event], None]


def ignore(_event: Event) -> None:
    """The default sink."""
