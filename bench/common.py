"""What every benchmark returns, and a timer that compares side by side.

Machines are noisy, so a benchmark never reports an absolute time on its own: each result is
a ratio against a baseline measured in the same process, interleaved with the measured code.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass

SCALE = os.environ.get("SEGUE_BENCH_SCALE", "small")


@dataclass(frozen=True)
class Result:
    name: str
    segue_seconds: float
    baseline: str
    baseline_seconds: float
    goal: str
    #: "higher" when segue/baseline should be large (a speed-up), "lower" when it should be small
    ratio_meaning: str = "segue / baseline time"
    note: str = ""
    #: What ``segue_seconds`` and ``baseline_seconds`` hold: seconds, or another quantity
    #: (``"tokens"``) for benchmarks that model a cost rather than time it.
    unit: str = "s"

    @property
    def ratio(self) -> float:
        return self.segue_seconds / self.baseline_seconds if self.baseline_seconds else float("inf")


def best_of(fn: Callable[[], object], repeat: int = 5) -> float:
    """The fastest of ``repeat`` runs (the least disturbed by the machine's noise)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def side_by_side(
    segue: Callable[[], object], baseline: Callable[[], object], repeat: int = 5
) -> tuple[float, float]:
    """Interleave the two so both see the same machine conditions; best of each."""
    best_x = best_b = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        segue()
        best_x = min(best_x, time.perf_counter() - start)
        start = time.perf_counter()
        baseline()
        best_b = min(best_b, time.perf_counter() - start)
    return best_x, best_b
