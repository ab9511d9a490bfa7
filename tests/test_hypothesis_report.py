"""A falsified property test reports its failing example under the project's own pytest
settings (``filterwarnings = error`` once turned hypothesis's report into an INTERNALERROR
that hid the example)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

FALSIFIABLE = '''
from hypothesis import given, settings, strategies as st

@settings(database=None, derandomize=True)
@given(st.integers(min_value=0))
def test_small(x: int) -> None:
    assert x < 5
'''


def test_a_falsified_property_shows_its_example(tmp_path: Path) -> None:
    test_file = tmp_path / "test_falsifiable.py"
    test_file.write_text(FALSIFIABLE)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(tmp_path), str(test_file)],
        check=False, capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert "INTERNALERROR" not in out
    # hypothesis names it "Falsifying example" up to 6.15x, "Failing test case" after
    assert "Falsifying example: test_small(" in out or "Failing test case: test_small(" in out
    assert "x=5" in out
