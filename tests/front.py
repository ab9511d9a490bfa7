"""The front door, for tests that check behaviour rather than a module.

* :data:`cli`: the ``segue`` console script, found the way an installed ``segue`` finds it
  (``[project.scripts]`` in pyproject.toml), in the shape click's ``CliRunner().invoke``
  takes. A test that runs it sees what a user sees (the fast ``history search`` path
  included) and never names the module the command line lives in.
* :func:`write_rows` / :func:`read_rows`: a transcript as SPEC.md §3 describes it, one JSON
  object a line, written and read as plain files.
* :func:`task_link`: a child workspace's ``segue-task.json`` (the README's "Sub-agents").
* :func:`logged_requests`: what a scripted model received, read from its ``requestLog``
  (SPEC.md §5: one JSON line a request, its system text, messages and advertised tools).
* :func:`is_rollover_boundary`, :func:`is_manual_reset`, :func:`is_synthetic_continuation`:
  the shapes of SPEC.md §3 ("Rows Xum writes") and R11, judged strictly on the row as it
  stands on disk (a :class:`segue.Row` is judged by its encoding).
"""

from __future__ import annotations

import importlib
import json
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import click

import segue

_PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


class _ConsoleScript:
    """The console script as a command ``CliRunner().invoke`` can run: it calls ``main(argv)``
    and exits with the code it returns, as the installed ``segue`` does."""

    name = "segue"

    def main(self, args: Sequence[str] = (), prog_name: str | None = None, **_: Any) -> None:
        raise SystemExit(_entry()(list(args)))


def _entry() -> Any:
    scripts = tomllib.loads(_PYPROJECT.read_text())["project"]["scripts"]
    module, _, function = scripts["segue"].partition(":")
    return getattr(importlib.import_module(module), function)


#: ``CliRunner().invoke(cli, [...])`` runs ``segue ...``.
cli = cast(click.Command, _ConsoleScript())


def write_rows(path: Path, rows: Iterable[Mapping[str, Any]]) -> Path:
    """``rows`` as a transcript file at ``path`` (one compact JSON object a line)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row, separators=(",", ":")) + "\n" for row in rows))
    return path


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The JSON lines of ``path`` (a transcript, a request log), in file order."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def task_link(home: Path, workspace: str) -> dict[str, Any]:
    """What ``segue-task.json`` in ``workspace``'s session folder says (it names the parent
    of a child workspace)."""
    obj = json.loads((home / "sessions" / workspace / "segue-task.json").read_text())
    assert isinstance(obj, dict), obj
    return obj


@dataclass(frozen=True)
class LoggedRequest:
    """One request as the scripted model's ``requestLog`` recorded it."""

    system: str
    rows: tuple[segue.Row, ...]
    tools: tuple[dict[str, Any], ...]


def logged_requests(path: Path) -> list[LoggedRequest]:
    """The requests the scripted model logged at ``path``, in the order it received them."""
    out = []
    for line in path.read_text().splitlines():
        obj = json.loads(line)
        assert isinstance(obj["system"], str) and isinstance(obj["tools"], list), line[:200]
        rows = tuple(segue.decode_row(json.dumps(m)) for m in obj["messages"])
        out.append(LoggedRequest(obj["system"], rows, tuple(obj["tools"])))
    return out


_REASONS = frozenset({"on-send", "mid-stream", "context-exceeded"})
#: ``muxMetadata.type`` of a lead-in and of the human's triggering message (SPEC.md §3).
LEAD_IN_TYPE = "context-window-lead-in"
CONTINUATION_TYPE = "context-window-continuation"
#: The ``muxMetadata`` flag of a synthetic continuation (SPEC.md §3).
CONTINUATION_FLAG = "contextBudgetContinuation"


def is_rollover_boundary(row: object) -> bool:
    """Whether ``row`` (a row as on disk, or a :class:`segue.Row`) is a valid rollover
    boundary: SPEC.md §3's shape, every field it names present and of its type."""
    row = _as_obj(row)
    metadata = row.get("metadata")
    if row.get("role") != "assistant" or row.get("parts") != [] or not isinstance(metadata, dict):
        return False
    mux = metadata.get("muxMetadata")
    if metadata.get("contextBoundaryKind") != "reset":
        return False
    flags = ("partial", "compactionBoundary")
    if any(metadata.get(flag, False) is not False for flag in flags):
        return False
    if "contextBudgetRejected" in metadata or "contextBudgetRejectedMessage" in metadata:
        return False
    if not isinstance(mux, dict) or mux.get("type") != "context-window-rollover":
        return False
    numbers = [mux.get("contextTokens"), mux.get("maxTokens")]
    return (
        isinstance(mux.get("rolloverId"), str)
        and mux["rolloverId"] != ""
        and mux.get("reason") in _REASONS
        and isinstance(mux.get("previousWindowId"), str)
        and isinstance(mux.get("flushOpportunity"), bool)
        and all(isinstance(n, int | float) and not isinstance(n, bool) for n in numbers)
        and mux.get("requestedBy", "model") == "model"
    )


def is_manual_reset(row: object) -> bool:
    """A reset row that is not a valid rollover boundary (R11: damage fails closed)."""
    obj = _as_obj(row)
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict) or metadata.get("contextBoundaryKind") != "reset":
        return False
    return not is_rollover_boundary(obj)


def is_synthetic_continuation(row: object) -> bool:
    """The synthetic ``Continue`` after a mid-stream rollover or a compaction (SPEC.md §3)."""
    obj = _as_obj(row)
    metadata = obj.get("metadata")
    if obj.get("role") != "user" or not isinstance(metadata, dict):
        return False
    mux = metadata.get("muxMetadata")
    return (
        metadata.get("synthetic") is True
        and metadata.get("uiVisible") is False
        and isinstance(mux, dict)
        and mux.get("type") == "normal"
        and mux.get(CONTINUATION_FLAG) is True
        and [p.get("text") for p in obj.get("parts", []) if p.get("type") == "text"]
        == ["Continue"]
    )


def _as_obj(row: object) -> dict[str, Any]:
    return dict(row) if isinstance(row, Mapping) else _row_obj(row)


def _row_obj(row: Any) -> dict[str, Any]:
    return cast(dict[str, Any], json.loads(segue.encode_row(cast(segue.Row, row))))


def main(argv: list[str]) -> int:
    """Run ``segue argv`` in this process through the console script; its exit code."""
    return int(_entry()(argv))
