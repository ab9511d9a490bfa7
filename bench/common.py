"""What every benchmark returns, and a timer that compares side by side.

Machines are noisy, so a benchmark never reports an absolute time on its own: each result is
a ratio against a baseline measured in the same process, interleaved with the measured code.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

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


def interleaved(
    fns: Sequence[Callable[[], object]], runs: int = 5
) -> list[tuple[float, float, float]]:
    """Each of ``fns`` run ``runs`` times, taking turns; ``(median, min, max)`` of each."""
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(runs):
        for fn, spent in zip(fns, times, strict=True):
            start = time.perf_counter()
            fn()
            spent.append(time.perf_counter() - start)
    return [(statistics.median(t), min(t), max(t)) for t in times]


def span_ms(t: tuple[float, float, float], runs: int) -> str:
    """``"median of 9, 41.0–47.2 ms"``."""
    return f"median of {runs}, {t[1] * 1e3:.1f}–{t[2] * 1e3:.1f} ms"


def process_env(pycache: Path) -> dict[str, str]:
    """The environment for timing a command in a fresh process as an installed copy runs:
    this checkout's ``src`` first on the path, and byte-compiled modules kept (in
    ``pycache``, not next to the sources) even when ``PYTHONDONTWRITEBYTECODE`` is set here,
    as ``pip install`` leaves them. Without that every run would compile every module again.
    """
    src = Path(__file__).resolve().parents[1] / "src"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.pathsep.join([str(src), *filter(None, [env.get("PYTHONPATH")])])
    env["PYTHONPYCACHEPREFIX"] = str(pycache)
    return env


def console_script(*args: str) -> list[str]:
    """``segue ARGS`` as the installed console script runs it: the entry point that
    pyproject.toml names, in this interpreter."""
    import tomllib

    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    target = tomllib.loads(pyproject.read_text())["project"]["scripts"]["segue"]
    module, _, func = target.partition(":")
    code = f"import sys; from {module} import {func}; sys.exit({func}())"
    return [sys.executable, "-c", code, *args]
