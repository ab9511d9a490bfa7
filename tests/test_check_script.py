"""``scripts/check`` runs in an environment of its own (``.venv-check/`` by default, named by
SEGUE_CHECK_VENV), installs into it only when it is new or pyproject.toml changed, and offers
a quick subset. The environment here is a stand-in whose ``python`` records what it is asked
to run, so the test sees every step the script takes without installing anything."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "check"


def _venv(tmp: Path, *, installed: bool) -> tuple[Path, Path]:
    venv = tmp / "venv"
    log = tmp / "calls.log"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"
    python.write_text(f'#!/bin/sh\necho "$*" >> {log}\n')
    python.chmod(0o755)
    if installed:
        digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()[:16]
        (venv / f".installed-{digest}").touch()
    return venv, log


def _check(venv: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CI"} | {"SEGUE_CHECK_VENV": str(venv)}
    return subprocess.run(["bash", str(SCRIPT), *args], env=env, capture_output=True,
                          text=True, timeout=60, check=False)


def test_the_full_check_uses_its_own_environment_and_reuses_it(tmp_path: Path) -> None:
    venv, log = _venv(tmp_path, installed=True)
    done = _check(venv)
    assert done.returncode == 0, done.stderr
    assert log.read_text().splitlines() == [
        "-m ruff check src tests bench", "-m mypy", "-m pytest -q",
    ]  # nothing installed: the environment is current


def test_a_new_environment_is_installed_once(tmp_path: Path) -> None:
    venv, log = _venv(tmp_path, installed=False)
    assert _check(venv, "tests/test_messages.py").returncode == 0
    assert _check(venv, "tests/test_messages.py").returncode == 0
    calls = log.read_text().splitlines()
    assert calls.count("-m pip install -q -e .[dev]") == 1
    assert calls[-1] == "-m pytest -q tests/test_messages.py"
    assert len(list(venv.glob(".installed-*"))) == 1


def test_quick_runs_ruff_and_the_named_tests_only(tmp_path: Path) -> None:
    venv, log = _venv(tmp_path, installed=True)
    done = _check(venv, "--quick", "tests/test_messages.py")
    assert done.returncode == 0, done.stderr
    calls = log.read_text().splitlines()
    assert calls[0] == "-m ruff check src tests bench"
    assert calls[-1] == "-m pytest -q -x tests/test_messages.py"
    assert "-m mypy" not in calls  # never the whole-tree type check
    assert not any("pip" in call for call in calls)
