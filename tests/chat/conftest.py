"""Fixtures of the line chat's tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.chat.terminal import Terminal


@pytest.fixture
def terminals() -> Iterator[list[Terminal]]:
    """The pseudo-terminals a test opens, closed when it ends (whatever it asserted)."""
    opened: list[Terminal] = []
    yield opened
    for terminal in opened:
        terminal.close()
