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

    def to_json(self) -> dict[str, Any]:
        """The closing object of ``segue run --json`` (SPEC.md §5)."""
        return {
            "status": self.status,
            "reason": self.reason,
            "windowId": self.window_id,
            "rollovers": self.rollovers,
        }


@dataclass(frozen=True)
class SessionConfig:
    experiment: bool = False
    threshold: int = 70
    idle_compaction_minutes: int | None = None
    max_steps: int = DEFAULT_MAX_STEPS
