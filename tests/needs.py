"""One rule for a test that cannot run here: it skips on a developer's machine and FAILS in CI.

CI is any run with ``CI`` set to a value other than an empty string, ``0``, ``false`` or ``no``
(``.ci/run`` sets ``CI=true`` itself). Every skip in the suite goes through :func:`unavailable`
(or :func:`require` / :func:`require_module`), so a missing server, a missing extra, a missing
privilege or a missing ``../shared`` can never turn into a quiet "skipped" in CI.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import NoReturn

import pytest

_FALSE = {"", "0", "false", "no"}


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in _FALSE


def unavailable(reason: str) -> NoReturn:
    """Skip locally; in CI fail, naming what was missing."""
    if in_ci():
        pytest.fail(f"{reason} (CI runs every test: this one could not run)", pytrace=False)
    pytest.skip(reason)


def require(condition: object, reason: str) -> None:
    if not condition:
        unavailable(reason)


def require_module(name: str) -> ModuleType:
    """``pytest.importorskip`` under the CI rule."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        unavailable(f"{name} is not importable ({exc}); install segue's dev extra")
