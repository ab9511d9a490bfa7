"""The frameworks are optional extras: segue never imports them on its own, and an
integration without its framework says which extra to install."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.integrations.helpers import env


def python(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        env=env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_segue_does_not_import_the_frameworks(tmp_path: Path) -> None:
    done = python(
        "import sys, segue, segue._cli.main, segue.integrations\n"
        "print(sorted(m for m in ('agents', 'pydantic_ai') if m in sys.modules))",
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("module", "framework", "extra"),
    [
        ("segue.integrations.openai_agents", "agents", "segue[openai-agents]"),
        ("segue.integrations.pydantic_ai", "pydantic_ai", "segue[pydantic-ai]"),
    ],
)
def test_a_missing_framework_is_one_clear_error(
    tmp_path: Path, module: str, framework: str, extra: str
) -> None:
    done = python(
        f"import sys\nsys.modules[{framework!r}] = None\n"
        "from segue._errors import UsageError\n"
        f"try:\n    import {module}\nexcept UsageError as exc:\n    print(exc.message)\n",
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert extra in done.stdout
