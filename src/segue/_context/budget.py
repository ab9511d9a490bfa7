"""Budget maths and the continue / warn / roll over / compact / pause decision (R1-R3, R13,
R14, R16, R18). Pure: token counts in, a decision out.

Numbers (SPEC.md §6): the threshold is an integer percent in steps of 5 (default 70); rollover
fires at ``threshold + 5`` percent of the model's limit (the five-point force buffer), or
earlier at the hard ceiling ``limit - min(8192, limit // 4)``; the notes warning comes 10 points
below the threshold, once per window. Threshold 100 turns automatic handling off: no rollover,
no warning, no automatic compaction, but the hard ceiling still pauses a turn.

Comparison rule: a projection *at* a trigger point triggers (``>=``); a request fits the hard
ceiling when it is ``<=`` it, leaving at least the output reserve free.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Literal

DEFAULT_THRESHOLD = 70
FORCE_BUFFER = 5
WARNING_ADVANCE = 10
MAX_OUTPUT_RESERVE = 8192

Moment = Literal["send", "settled"]


def output_reserve(limit: int) -> int:
    return min(MAX_OUTPUT_RESERVE, limit // 4)


def validate_threshold(threshold: int) -> int:
    if (
        isinstance(threshold, bool)
        or not isinstance(threshold, int)
        or not 0 <= threshold <= 100
        or threshold % 5
    ):
        raise ValueError(f"threshold must be an integer 0-100 in steps of 5, got {threshold!r}")
    return threshold


@dataclass(frozen=True)
class Budget:
    """One model's budget: its context limit and the user's threshold percent."""

    limit: int
    threshold: int = DEFAULT_THRESHOLD

    def __post_init__(self) -> None:
        if self.limit <= 0:
            raise ValueError(f"context limit must be positive, got {self.limit}")
        validate_threshold(self.threshold)

    @property
    def automatic(self) -> bool:
        """False at threshold 100: neither rollover nor automatic compaction (R2, R18)."""
        return self.threshold < 100

    @property
    def hard_ceiling(self) -> int:
        """The largest request that still leaves the output reserve free."""
        return self.limit - output_reserve(self.limit)

    @property
    def trigger_tokens(self) -> int | None:
        """Projected size at which automatic handling fires, or None when it is off."""
        if not self.automatic:
            return None
        return min(self.limit * (self.threshold + FORCE_BUFFER) // 100, self.hard_ceiling)

    @property
    def warning_tokens(self) -> int | None:
        """Projected size at which the once-per-window notes warning is offered (R14)."""
        if not self.automatic or self.threshold - WARNING_ADVANCE <= 0:
            return None
        return self.limit * (self.threshold - WARNING_ADVANCE) // 100

    def percent(self, tokens: int) -> int:
        """Usage shown to users, rounded up so the figure is an upper bound (R3)."""
        return -(-tokens * 100 // self.limit)

    def fits(self, tokens: int) -> bool:
        return tokens <= self.hard_ceiling


def rollover_label(threshold: int) -> str:
    """The user-facing label: threshold 70 reads "Rolls over by 75%"."""
    validate_threshold(threshold)
    if threshold >= 100:
        return "Automatic rollover off"
    return f"Rolls over by {threshold + FORCE_BUFFER}%"


class Action(Enum):
    CONTINUE = "continue"
    WARN = "warn"  # continue, and offer the notes warning first
    ROLLOVER = "rollover"
    COMPACT = "compact"  # the ordinary automatic compaction (experiment off, R1)
    BLOCK = "block"  # rollover needed but not allowed (R13): the turn pauses
    PAUSE = "pause"  # hard ceiling with automatic handling off (R18)


@dataclass(frozen=True)
class Decision:
    action: Action
    projected: int
    reason: str | None = None


@dataclass(frozen=True)
class Situation:
    """What the engine knows when it asks."""

    projected: int
    #: experiments.tokenBudget (R1)
    experiment: bool
    #: the effective tool policy lets the agent call session_history (R12, R13)
    may_use_history: bool
    #: the active window holds provider-eligible rows that a rollover would seal
    window_has_context: bool
    #: the notes warning was already given in this window (R14)
    warned: bool = False
    #: the notes file is writable, so a warning is worth giving (R14)
    notes_writable: bool = True


def decide(budget: Budget, s: Situation) -> Decision:
    """Decide at a send or a settled tool step from the projected size of the next request."""
    trigger = budget.trigger_tokens
    if trigger is None:
        if not budget.fits(s.projected):
            return Decision(
                Action.PAUSE,
                s.projected,
                f"the next request ({s.projected} tokens) exceeds the hard ceiling "
                f"({budget.hard_ceiling} of {budget.limit}) and automatic handling is off",
            )
        return Decision(Action.CONTINUE, s.projected)
    if s.projected >= trigger:
        if not s.window_has_context:
            # Rolling over or compacting would seal nothing; if the request does not fit,
            # preflight rejects it.
            return Decision(Action.CONTINUE, s.projected)
        if not s.experiment:
            return Decision(Action.COMPACT, s.projected)
        if not s.may_use_history:
            return Decision(
                Action.BLOCK,
                s.projected,
                "context window is full and this agent may not use session_history, so a "
                "rollover would lose access to earlier work; allow session_history for the "
                "agent, run /compact, or /clear --soft",
            )
        return Decision(Action.ROLLOVER, s.projected)
    warn_at = budget.warning_tokens
    if (
        s.experiment
        and warn_at is not None
        and s.projected >= warn_at
        and not s.warned
        and s.notes_writable
    ):
        return Decision(Action.WARN, s.projected)
    return Decision(Action.CONTINUE, s.projected)


def projected_tokens(
    *, last_context: int, last_output: int, new_tool_results: int, assembled_estimate: int
) -> int:
    """R3: the provider's own count of the last step plus what was added since, or the
    assembled estimate where that is larger."""
    return max(last_context + last_output + new_tool_results, assembled_estimate)


def trigger_label(budget: Budget, *, experiment: bool) -> str:
    """What happens, and at which percent, in the words a meter shows: "rolls over by 75%"
    with the experiment on, "compacts by 75%" with it off (the ordinary automatic compaction
    fires there instead, R1). When the hard ceiling comes first (a small window, a high
    threshold), the percent is the ceiling's: the label names the real trigger point."""
    if not budget.automatic:
        return "automatic rollover off" if experiment else "automatic compaction off"
    point = budget.threshold + FORCE_BUFFER
    if budget.hard_ceiling < budget.limit * point // 100:
        point = budget.hard_ceiling * 100 // budget.limit
    return f"{'rolls over' if experiment else 'compacts'} by {point}%"
