"""Run every benchmark (``bench/bench_*.py``) and print one table of ratios.

    python -m bench.run            # all, small sizes (a few minutes on 2 cores)
    python -m bench.run store      # only benchmarks whose module name contains "store"
    python -m bench.run startup    # start-up of the command line, in fresh processes
    SEGUE_BENCH_SCALE=large python -m bench.run

Each module exposes ``run() -> list[Result]``.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

from bench.common import Result


def _modules(filters: list[str]) -> list[str]:
    """The benchmark modules the filters name: a filter that is a module's whole name (with
    or without ``bench_``) names that one alone (``postgres`` is bench_postgres, not also
    bench_postgres_lookback); any other filter every module whose name holds it."""
    here = Path(__file__).resolve().parent
    names = sorted(p.stem for p in here.glob("bench_*.py"))
    whole = {n: n for n in names} | {n.removeprefix("bench_"): n for n in names}
    return [n for n in names if not filters or any(
        whole[f] == n if f in whole else f in n for f in filters
    )]


def _fmt_time(seconds: float, unit: str = "s") -> str:
    if unit != "s":
        return f"{seconds:.0f} {unit}"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def main(argv: list[str]) -> int:
    results: list[Result] = []
    for name in _modules(argv):
        print(f"running {name} ...", file=sys.stderr, flush=True)
        module = importlib.import_module(f"bench.{name}")
        results.extend(module.run())
    header = f"{'benchmark':<46} {'segue':>10} {'baseline':>10} {'ratio':>9}  goal"
    print(header)
    print("-" * len(header))
    for r in results:
        print(
            f"{r.name:<46} {_fmt_time(r.segue_seconds, r.unit):>10} "
            f"{_fmt_time(r.baseline_seconds, r.unit):>10} "
            f"{r.ratio:>8.3g}x  {r.goal}  [baseline: {r.baseline}]"
            + (f"  ({r.note})" if r.note else "")
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
