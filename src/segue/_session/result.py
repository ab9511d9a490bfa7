"""What a turn ends with, and how a session is configured."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from segue._errors import TurnPaused
from segue._providers.base import Usage
from segue._providers.request import ToolCall

Status = Literal["completed", "paused", "rejected", "error"]
DEFAULT_MAX_STEPS = 64


@dataclass(frozen=True)
class TurnResult:
    status: Status
    reason: str | None
    window_id: str
    rollovers: int
    text: str = ""
    #: The turn's usage summed over its provider steps (``metadata.usage`` keys), or None.
    usage: Mapping[str, int] | None = field(default=None, compare=False)

    def to_json(self) -> dict[str, Any]:
        """The closing object of ``segue run --json`` (SPEC.md §5)."""
        return {
            "status": self.status,
            "reason": self.reason,
            "windowId": self.window_id,
            "rollovers": self.rollovers,
            "text": self.text or None,
            "usage": dict(self.usage) if self.usage is not None else None,
        }


class UsageTotal:
    """A turn's usage, summed over its provider steps."""

    def __init__(self) -> None:
        self._usage: dict[str, int] = {}

    def add(self, usage: Usage) -> None:
        for key, value in usage.to_obj().items():
            self._usage[key] = self._usage.get(key, 0) + value

    def to_obj(self) -> dict[str, int] | None:
        return dict(self._usage) if self._usage else None


class OutputLimit:
    """What a turn does with replies cut at the model's output limit.

    * a cut inside text is continued once per turn with a synthetic continuation; a second
      cut stops the turn with a reason;
    * a cut inside a tool call stops the turn: the cut call is never run, nor the complete
      calls of the same reply (running half of what the model meant to do is worse).
    """

    def __init__(self) -> None:
        self.continued = False

    def continue_text(self) -> None:
        if self.continued:
            raise TurnPaused("the reply was cut at the model's output limit again after one "
                             "continuation; the turn stops here (send a message to go on)")
        self.continued = True

    @staticmethod
    def cut_call(name: str, complete: tuple[ToolCall, ...]) -> str:
        others = (f"; the {len(complete)} complete call(s) of the same reply did not run "
                  "either" if complete else "")
        return (f"the reply hit the model's output limit in the middle of a call to tool "
                f"{name!r}; the cut-off call was not run{others} (ask for smaller steps, "
                "e.g. write a large file in parts)")


@dataclass(frozen=True)
class SessionConfig:
    experiment: bool = False
    threshold: int = 70
    idle_compaction_minutes: int | None = None
    max_steps: int = DEFAULT_MAX_STEPS
