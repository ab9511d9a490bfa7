"""How small the demo's context window is, and at which threshold. Pure arithmetic.

The demo wants the replayed run to fill about :data:`TARGET_WINDOWS` windows, so it rolls
over at least twice before the look back, while two things stay true in every window:

* the largest recorded tool output passes the settled-tool-output guard unchanged (a result
  over a quarter of the hard ceiling would be cut, and the replay would no longer be the
  recorded run);
* a window holds the fixed overhead (agent prompt, tool schemas, lead-in) plus the opening
  prompt and first step, or any single step, below the rollover trigger, so no turn pauses
  for want of space.

The threshold is the default 70 % (rolls over by 75 %) whenever that works. A run with one
very large output forces a window so large that, at 70 %, the run would not fill enough of
them; then the threshold is lowered in steps of 5 (to :data:`MIN_THRESHOLD` at most), the
same setting a user would change, and the usage meter shows it.

Numbers are the engine's (:mod:`segue._context.budget`). The result is an estimate: the demo
checks the rollovers that really happened.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from segue._context.budget import DEFAULT_THRESHOLD, FORCE_BUFFER, Budget

TARGET_WINDOWS = 4
#: Estimated windows below which a lower threshold is tried.
ENOUGH_WINDOWS = 3.2
MIN_THRESHOLD = 40
#: Window sizes are rounded up to this, so the meter shows round numbers.
ROUND_TO = 500
#: Tokens the output guard counts beyond the text itself (JSON quoting, the replay label).
GUARD_SLACK = 64


@dataclass(frozen=True)
class Sizes:
    """Token counts: ``overhead`` of every request, then each turn's prompt, each step (text,
    calls and results) in order, the first step of the run, and each tool output alone."""

    overhead: int
    prompts: Sequence[int]
    steps: Sequence[int]
    outputs: Sequence[int]

    @property
    def total(self) -> int:
        return sum(self.prompts) + sum(self.steps)


@dataclass(frozen=True)
class Plan:
    context_window: int
    threshold: int
    estimated_windows: float


def _round_up(value: int) -> int:
    return -(-value // ROUND_TO) * ROUND_TO


def _guard_ok(limit: int, largest_output: int) -> bool:
    return max(256, Budget(limit).hard_ceiling // 4) >= largest_output + GUARD_SLACK


def plan_for(sizes: Sizes, threshold: int) -> Plan:
    """The smallest round window meeting the module docstring's conditions at ``threshold``."""
    first = (sizes.prompts[0] if sizes.prompts else 0) + (sizes.steps[0] if sizes.steps else 0)
    largest = max([first, *sizes.steps, *sizes.prompts, 1])
    trigger_percent = threshold + FORCE_BUFFER
    per_window = -(-sizes.total // TARGET_WINDOWS)
    limit = _round_up((max(per_window, largest) + sizes.overhead) * 100 // trigger_percent)
    while not _guard_ok(limit, max([*sizes.outputs, 0])):
        limit += ROUND_TO
    room = Budget(limit, threshold).trigger_tokens
    assert room is not None  # thresholds here are below 100
    windows = sizes.total / max(1, room - sizes.overhead)
    return Plan(limit, threshold, windows)


def choose_plan(sizes: Sizes) -> Plan:
    """The default threshold if it gives enough windows, else the highest one that does, else
    the one with the most windows (the demo then reports what really happened)."""
    best: Plan | None = None
    for threshold in range(DEFAULT_THRESHOLD, MIN_THRESHOLD - 1, -5):
        plan = plan_for(sizes, threshold)
        if plan.estimated_windows >= ENOUGH_WINDOWS:
            return plan
        if best is None or plan.estimated_windows > best.estimated_windows:
            best = plan
    assert best is not None  # the range is not empty
    return best
