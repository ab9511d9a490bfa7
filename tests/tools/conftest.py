"""Fixtures for the workspace tools: a workspace directory with a sibling outside it."""

from __future__ import annotations

from pathlib import Path

import pytest

from segue._tools.paths import Workspace


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    (tmp_path / "work").mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("top secret\n")
    return Workspace.at(tmp_path / "work")
