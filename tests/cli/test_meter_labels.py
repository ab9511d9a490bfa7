"""The meter's words are true (SPEC.md R1-R3), through real processes: with the experiment off
``run`` and ``settings show`` say "compacts by", not "rolls over by"; where the hard ceiling
(limit − min(8192, limit/4)) comes before threshold + 5, the label names the ceiling."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def segue(home: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k != "SEGUE_HOME"}
    proc = subprocess.run(
        [sys.executable, "-m", "segue", "--home", str(home), "-w", "meter", *args],
        cwd=cwd, env=environ, input="", capture_output=True, text=True, timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return proc


def model(tmp: Path, window: int) -> str:
    path = tmp / f"s{window}.json"
    path.write_text(json.dumps({"contextWindow": window, "encoding": "o200k_base",
                                "responses": [{"text": "ok"}]}))
    return f"scripted:{path}"


def test_run_says_compacts_with_the_experiment_off_and_rolls_over_with_it_on(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    off = segue(home, tmp_path, "run", "-m", model(tmp_path, 100_000), "hi")
    assert "compacts by 75%]" in off.stderr and "rolls over" not in off.stderr
    segue(home, tmp_path, "settings", "set", "experiments.tokenBudget", "true")
    segue(home, tmp_path, "clear", "--yes")
    on = segue(home, tmp_path, "run", "-m", model(tmp_path, 100_000), "hi")
    assert "rolls over by 75%]" in on.stderr and "compacts" not in on.stderr


def test_run_names_the_hard_ceiling_when_it_comes_first(tmp_path: Path) -> None:
    home = tmp_path / "home"
    # 8,000 tokens: the ceiling is 8000 - 2000 = 6000 (75%), before 90 + 5 = 95%.
    segue(home, tmp_path, "settings", "set", "threshold.default", "90")
    small = segue(home, tmp_path, "run", "-m", model(tmp_path, 8000), "hi")
    assert "compacts by 75%]" in small.stderr and "95%" not in small.stderr
    # A large window reaches threshold + 5 first.
    segue(home, tmp_path, "clear", "--yes")
    large = segue(home, tmp_path, "run", "-m", model(tmp_path, 1_000_000), "hi")
    assert "compacts by 95%]" in large.stderr


def test_settings_show_labels_each_threshold_truthfully(tmp_path: Path) -> None:
    home = tmp_path / "home"
    segue(home, tmp_path, "settings", "set", "threshold.openai:gpt-4o", "90")
    shown = segue(home, tmp_path, "settings", "show").stdout
    assert "threshold.default = 70  (compacts by 75%)" in shown
    # gpt-4o: 128,000 tokens, ceiling 128000 - 8192 = 119,808 (93%), before 95%.
    assert "threshold.openai:gpt-4o = 90  (compacts by 93%)" in shown
    assert "rolls over" not in shown
    segue(home, tmp_path, "settings", "set", "experiments.tokenBudget", "true")
    shown = segue(home, tmp_path, "settings", "show").stdout
    assert "threshold.default = 70  (rolls over by 75%)" in shown
    assert "threshold.openai:gpt-4o = 90  (rolls over by 93%)" in shown
