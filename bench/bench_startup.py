"""Start-up (issue 13): how long a command takes from exec to exit, in a fresh process, as a
ratio to importing click alone (the floor of any click command line), run side by side.

1. ``segue --help`` against ``python -c "import click"`` (goal ≤ 2×);
2. ``segue history windows`` on a small workspace against the same (goal ≤ 3×);
3. ``import segue`` against ``python -c pass`` (the library's import: goal ≤ 1.2×).

Commands run as the console script does (pyproject.toml's entry point, this interpreter),
with byte-compiled modules kept as an installed copy has them (bench.common.process_env).
Each figure is the median of RUNS interleaved runs, min–max in the note, after one warm-up.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from bench.common import Result, console_script, interleaved, process_env, span_ms
from segue._history.store import HistoryStore
from segue._messages import make_row
from segue._workspace import Layout

RUNS = 9
WORKSPACE = "startup"


def _runner(command: list[str], env: dict[str, str]) -> Callable[[], object]:
    def run() -> None:
        subprocess.run(command, env=env, stdout=subprocess.DEVNULL, check=True)

    return run


def _small_workspace(home: Path) -> None:
    """A short session: 40 turns in two windows."""
    store = HistoryStore(Layout(home, WORKSPACE), durable=False)
    store.append(
        [make_row("assistant" if i % 2 else "user", f"turn {i}", id=f"t{i}") for i in range(40)]
    )


def _compare(
    name: str, segue: list[str], baseline: tuple[str, list[str]], goal: str, env: dict[str, str]
) -> Result:
    fns = [_runner(segue, env), _runner(baseline[1], env)]
    for fn in fns:
        fn()  # warm-up: byte-compiles into the cache, fills the page cache
    t_segue, t_base = interleaved(fns, RUNS)
    return Result(
        name,
        t_segue[0],
        baseline[0],
        t_base[0],
        goal,
        note=f"{span_ms(t_segue, RUNS)}; baseline {span_ms(t_base, RUNS)}",
    )


def run() -> list[Result]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = process_env(root / "pycache")
        home = root / "home"
        _small_workspace(home)
        click = ("python -c 'import click'", [sys.executable, "-c", "import click"])
        bare = ("python -c pass", [sys.executable, "-c", "pass"])
        windows = ["--home", str(home), "-w", WORKSPACE, "history", "windows"]
        return [
            _compare("segue --help (process)", console_script("--help"), click, "<= 2x", env),
            _compare(
                "segue history windows, 40 rows (process)",
                console_script(*windows),
                click,
                "<= 3x",
                env,
            ),
            _compare(
                "import segue (process)",
                [sys.executable, "-c", "import segue"],
                bare,
                "<= 1.2x",
                env,
            ),
        ]


if __name__ == "__main__":
    from bench.run import main

    sys.exit(main(["startup"]))
