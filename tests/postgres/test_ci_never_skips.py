"""Without a PostgreSQL server the store's tests skip locally but fail in CI (``CI`` set to
anything but empty, 0, false or no):
a PostgreSQL test skipped in CI would hide that the store was never tested."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROBE = "tests/postgres/test_cli.py::test_first_use_creates_the_schema"


@pytest.mark.parametrize(
    ("ci", "outcome"),
    [("true", "1 error"), ("1", "1 error"), ("yes", "1 error"), ("", "1 skipped"),
     ("0", "1 skipped")],
)
def test_missing_server(tmp_path: Path, ci: str, outcome: str) -> None:
    env = {
        **os.environ,
        "CI": ci,
        "SEGUE_TEST_PG_BINDIR": str(tmp_path / "no-postgres-here"),
        "PYTHONPATH": str(ROOT / "src"),
    }
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", PROBE],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False,
    )
    assert outcome in result.stdout, result.stdout
    assert "PostgreSQL server unavailable" in result.stdout
    if ci not in ("", "0"):
        assert result.returncode != 0
        assert "CI must run the PostgreSQL tests" in result.stdout
    else:
        assert result.returncode == 0
