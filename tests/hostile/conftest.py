"""Prints the hostile-suite figures at the end of a run that included it."""

from __future__ import annotations

import pytest

from tests.hostile.harness import FIGURES

_ORDER = (
    "faults tried",
    "commands run",
    "tracebacks",
    "hangs",
    "bytes changed outside",
    "acknowledged batches lost",
)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not FIGURES["commands run"]:
        return
    terminalreporter.section("hostile disks and files")
    for key in _ORDER:
        terminalreporter.write_line(f"{key}: {FIGURES[key]}")
