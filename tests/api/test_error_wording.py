"""Errors a library caller meets speak Python, not the command line: no flags, no
``segue …`` commands in ``str(error)``; the command line still prints its own wording."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import segue
from segue._errors import SegueError, StreamInProgress
from segue._providers.registry import create_provider
from segue._settings import Settings
from segue._views.windows import check_window_id

#: A flag (``-m``, ``--store``) or a segue command (```segue settings set```).
CLI_LANGUAGE = re.compile(r"(^|[\s(`])--?[a-z]|\bsegue (run|chat|history|settings|clear)\b")
COMPAT = "openai-compatible"


def _raised(call: Callable[[], object]) -> SegueError:
    with pytest.raises(SegueError) as caught:
        call()
    return caught.value


CASES: dict[str, Callable[[Path], object]] = {
    "no model": lambda tmp: segue.open_session("ws", home=tmp / "h", workdir=tmp),
    "unknown context window": lambda tmp: create_provider(
        "openai:gpt-99", environ={"OPENAI_API_KEY": "sk-test"}),
    "unknown tokenizer": lambda tmp: create_provider(
        f"{COMPAT}:my-model", environ={},
        settings=Settings({f"contextWindow.{COMPAT}:my-model": 8192,
                           f"{COMPAT}.baseUrl": "http://localhost:8080/v1"})),
    "no base URL": lambda tmp: create_provider(
        f"{COMPAT}:llama3", environ={},
        settings=Settings({f"contextWindow.{COMPAT}:llama3": 8192})),
    "no encoding": lambda tmp: segue.resolve_model(f"{COMPAT}:mystery"),
    "bad window id": lambda tmp: check_window_id("w:?"),
    "stream in progress": lambda tmp: (_ for _ in ()).throw(StreamInProgress(tmp)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_library_wording(case: str, tmp_path: Path) -> None:
    error = _raised(lambda: CASES[case](tmp_path))
    assert not CLI_LANGUAGE.search(str(error)), str(error)
    assert str(error) == error.message
    assert error.cli_message  # the command line always has something to print


def test_the_command_line_keeps_its_words(tmp_path: Path) -> None:
    """The same failures through ``segue``: the flags and commands a shell user types."""
    def run(*args: str, env: dict[str, str] | None = None) -> str:
        out = subprocess.run(
            [sys.executable, "-m", "segue", "--home", str(tmp_path / "h"), "-w", "ws", *args],
            capture_output=True, text=True, cwd=tmp_path, check=False,
            env={"PATH": "/usr/bin:/bin", "PYTHONPATH": ":".join(sys.path), **(env or {})},
        )
        assert out.returncode == 2, out.stderr
        return out.stderr

    assert "pass -m provider:name" in run("run", "hi")
    err = run("run", "-m", "openai:gpt-99", "hi", env={"OPENAI_API_KEY": "sk-test"})
    assert "`segue settings set contextWindow.openai:gpt-99 <tokens>`" in err
    assert "(--encoding " in run("tokens", "count", "-m", f"{COMPAT}:mystery", "-")
