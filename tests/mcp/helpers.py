"""Running the real ``segue`` command as an MCP server, and a workspace to serve."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio

import segue
from segue._context.rollover import manual_reset_row
from segue._history import HistoryStore
from segue._messages import Role, make_row
from segue._workspace import Layout

SRC = str(Path(segue.__file__).resolve().parents[1])
T = TypeVar("T")


def subprocess_env(home: Path) -> dict[str, str]:
    return {"PYTHONPATH": SRC, "SEGUE_HOME": str(home), "PATH": os.environ.get("PATH", "")}


def segue_params(home: Path, *args: str) -> Any:
    from mcp import StdioServerParameters

    return StdioServerParameters(
        command=sys.executable, args=["-m", "segue._cli.main", *args], env=subprocess_env(home)
    )


def run_client(home: Path, args: list[str], body: Callable[[Any], Awaitable[T]]) -> T:
    """Start ``segue ARGS`` as a subprocess and run ``body(client)`` against it."""
    from mcp import Client

    async def main() -> T:
        async with Client(segue_params(home, *args), read_timeout_seconds=60) as client:
            return await body(client)

    return anyio.run(main)


def write_history(home: Path, workspace: str, texts: list[str], *, floor_after: int | None) -> None:
    """User rows with ``texts``; a manual reset (the privacy floor) after the first
    ``floor_after`` of them."""
    store = HistoryStore(Layout(home, workspace))
    rows = []
    for index, text in enumerate(texts):
        if floor_after is not None and index == floor_after:
            rows.append(manual_reset_row(row_id="reset-1", now_ms=1_700_000_000_000 + index))
        role: Role = "user" if index % 2 == 0 else "assistant"
        rows.append(
            make_row(role, text, id=f"r{index}", metadata={"timestamp": 1_700_000_000_000 + index})
        )
    store.append(rows)


def run_segue(home: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real ``segue`` command, in its own process, workspace ``w``."""
    return subprocess.run(
        [sys.executable, "-m", "segue._cli.main", "-w", "w", *args],
        cwd=cwd, env=subprocess_env(home), capture_output=True, text=True, timeout=120,
        check=False,
    )
