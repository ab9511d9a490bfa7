"""Shared test set-up.

* Network is blocked for the whole suite: segue must work offline (tokenizers ship inside the
  package). Only AF_UNIX sockets (used by some stdlib machinery) are allowed.
* ``SEGUE_TEST_SCALE`` (``small`` by default, ``large`` on request) sizes the crash and soak runs.
* In CI (``tests.needs.in_ci``) a skip is a failure, wherever it comes from (``pytest.skip``, a
  ``skipif`` mark, a module-level ``importorskip``, a fixture): a test that cannot run on the
  machine CI runs on has not tested anything. Locally a skip stays a skip, with its reason.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.needs import in_ci

SCALE = os.environ.get("SEGUE_TEST_SCALE", "small")


def scaled(small: int, large: int) -> int:
    """A loop count for heavy tests: ``small`` in the default run, ``large`` on request."""
    return large if SCALE == "large" else small


class NetworkBlocked(RuntimeError):
    pass


_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _guard(sock: socket.socket, address: Any) -> None:
    if sock.family != socket.AF_UNIX:
        raise NetworkBlocked(f"tests may not open network connections (to {address!r})")


def _blocked_connect(self: socket.socket, address: Any) -> None:
    _guard(self, address)
    _real_connect(self, address)


def _blocked_connect_ex(self: socket.socket, address: Any) -> int:
    _guard(self, address)
    return _real_connect_ex(self, address)


@pytest.fixture(autouse=True, scope="session")
def _no_network() -> Iterator[None]:
    socket.socket.connect = _blocked_connect  # type: ignore[method-assign,assignment]
    socket.socket.connect_ex = _blocked_connect_ex  # type: ignore[method-assign,assignment]
    yield
    socket.socket.connect = _real_connect  # type: ignore[method-assign]
    socket.socket.connect_ex = _real_connect_ex  # type: ignore[method-assign]


@pytest.fixture(autouse=True)
def _no_first_build(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tests' short histories stand in for long ones: their first look-back call answers
    from the scan, as a long history's does, unless the test is about the first call itself
    (``first_build``: a history under 2 MiB is indexed before its first call answers)."""
    if request.node.get_closest_marker("first_build") is None:
        monkeypatch.setenv("SEGUE_INDEX_FIRST_BUILD", "off")


@pytest.fixture
def segue_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh SEGUE_HOME, also exported for subprocesses."""
    home = tmp_path / "segue-home"
    home.mkdir()
    monkeypatch.setenv("SEGUE_HOME", str(home))
    return home


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory the test runs in (agents and tools resolve against the cwd)."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return work


def _fail_in_ci(report: pytest.TestReport | pytest.CollectReport) -> None:
    if report.skipped and not hasattr(report, "wasxfail") and in_ci():
        reason = report.longrepr[-1] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"skipped in CI, where every test must run: {reason}"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    _fail_in_ci(report)
    return report


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(
    collector: pytest.Collector,
) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
    report = yield
    _fail_in_ci(report)
    return report
