"""``-h`` on every command, and shell completion as the README documents it: the scripts
click generates for bash, zsh and fish, and a real bash completing through them."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from segue._cli.main import cli

ROOT = Path(__file__).resolve().parents[2]


def _commands(group: click.Group, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    yield path
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if isinstance(command, click.Group):
            yield from _commands(command, (*path, name))
        elif command is not None:
            yield (*path, name)


COMMANDS = list(_commands(cli))


def test_every_command_is_listed() -> None:
    names = {" ".join(c) for c in COMMANDS}
    assert {"", "history search", "settings get", "settings unset", "workspaces"} <= names


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "segue")
def test_dash_h_is_help_everywhere(path: tuple[str, ...], tmp_path: Path) -> None:
    short = CliRunner().invoke(cli, ["--home", str(tmp_path / "h"), *path, "-h"])
    assert short.exit_code == 0, short.output
    assert short.stdout.startswith("Usage: ")
    assert "-h, --help" in short.stdout
    long = CliRunner().invoke(cli, ["--home", str(tmp_path / "h"), *path, "--help"])
    assert long.stdout == short.stdout
    assert not (tmp_path / "h").exists()


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT / "src"), **extra}


def _segue(env: dict[str, str]) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "segue"], capture_output=True, text=True, env=env, timeout=60,
        check=False, stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.parametrize(
    ("shell", "marker"),
    [("bash", "complete -o nosort -F _segue_completion segue"),
     ("zsh", "#compdef segue"),
     ("fish", "complete --no-files --command segue")],
)
def test_the_completion_script_is_produced(shell: str, marker: str) -> None:
    script = _segue(_env(_SEGUE_COMPLETE=f"{shell}_source"))
    assert marker in script
    assert "_SEGUE_COMPLETE" in script


def test_completion_answers_commands_and_setting_keys() -> None:
    commands = _segue(_env(_SEGUE_COMPLETE="bash_complete", COMP_WORDS="segue hist",
                           COMP_CWORD="1"))
    assert commands.split() == ["plain,history"]
    keys = _segue(_env(_SEGUE_COMPLETE="bash_complete", COMP_WORDS="segue settings get thr",
                       COMP_CWORD="3"))
    assert keys.split() == ["plain,threshold.default", "plain,threshold."]


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_bash_completes_through_the_sourced_script(tmp_path: Path) -> None:
    """What the README says to put in ~/.bashrc, in a real bash: Tab on `segue sett`."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "segue"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m segue "$@"\n')
    wrapper.chmod(0o755)
    script = (
        'eval "$(_SEGUE_COMPLETE=bash_source segue)"\n'
        "COMP_WORDS=(segue sett); COMP_CWORD=1; _segue_completion segue\n"
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
        "COMPREPLY=(); COMP_WORDS=(segue settings unset mcp.); COMP_CWORD=3\n"
        "_segue_completion segue\n"
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    env = _env(PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    proc = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", script], capture_output=True, text=True,
        env=env, timeout=60, check=False, stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["settings", "mcp.servers", "mcp.toolSearchPercent"]


def test_the_readme_lines_produce_their_scripts() -> None:
    """Every `_SEGUE_COMPLETE=…_source segue` the README tells a user to run prints a script."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shells = re.findall(r"_SEGUE_COMPLETE=(\w+)_source segue", readme)
    assert {"bash", "zsh", "fish"} <= set(shells)
    for shell in set(shells):
        assert "_segue_completion" in _segue(_env(_SEGUE_COMPLETE=f"{shell}_source")), shell


@pytest.mark.parametrize("args", [("-h",), ("history", "-h"), ("settings", "set", "-h")])
def test_dash_h_from_a_real_process(args: tuple[str, ...]) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "segue", *args], capture_output=True, text=True, env=_env(),
        timeout=60, check=False, stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Usage: segue ")
