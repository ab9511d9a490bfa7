"""What a turn ends with, and how a session is configured."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

Status = Literal["completed", "paused", "rejected", "error"]
DEFAULT_MAX_STEPS = 64


@dataclass(frozen=True)
class TurnResult:
    status: Status
    reason: str | None
    window_id: str
    rollovers: int
    text: str = ""
    #: Provider-reported tokens summed over the turn's steps (``inputTokens``,
    #: ``outputTokens``); None when no step reported any.
    usage: dict[str, int] | None = None

    def to_json(self) -> dict[str, Any]:
        """The closing object of ``segue run --json`` (SPEC.md §5)."""
        return {
            "status": self.status,
            "reason": self.reason,
            "windowId": self.window_id,
            "rollovers": self.rollovers,
            "text": self.text or None,
            "usage": self.usage,
        }


def add_usage(total: dict[str, int] | None, step: dict[str, int]) -> dict[str, int] | None:
    """``total`` with one step's usage added (None stays None while no step reports)."""
    if not step:
        return total
    out = dict(total or {})
    for key, value in step.items():
        out[key] = out.get(key, 0) + value
    return out


@dataclass(frozen=True)
class SessionConfig:
    experiment: bool = False
    threshold: int = 70
    idle_compaction_minutes: int | None = None
    max_steps: int = DEFAULT_MAX_STEPS
