"""Tool calls and results as a person reads them, for the line chat, ``run`` and the TUI. Pure.

A call is one line: ``$ the command`` for ``bash``, the path for a file tool, compact JSON
otherwise. A result is a short status line and, for a command, an excerpt of its output as
text (not the escaped JSON the model receives): the first lines, and how many more there are.
An interrupted command says "interrupted"; a declined call says it was not run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

#: How many lines of a command's output are shown under its result.
EXCERPT_LINES = 6
EXCERPT_CHARS = 160


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _compact(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return " ".join(text.split())


def call_text(name: str, args: Any, limit: int = 100) -> str:
    if isinstance(args, Mapping):
        if name == "bash" and isinstance(args.get("command"), str):
            return _cut(f"bash $ {' '.join(args['command'].split())}", limit + 8)
        if name.startswith("file_") and isinstance(args.get("path"), str):
            return _cut(f"{name} {args['path']}", limit + 8)
    return f"{name} {_cut(_compact(args), limit)}"


def result_lines(output: Any) -> list[str]:
    """The status line, then any excerpt lines (without indentation)."""
    if not isinstance(output, Mapping):
        return [_cut(_compact(output), EXCERPT_CHARS)]
    error = output.get("error")
    code = error.get("code") if isinstance(error, Mapping) else None
    message = error.get("message") if isinstance(error, Mapping) else None
    if code == "interrupted":
        head = "interrupted: the command and its child processes were killed"
    elif code == "approval_denied":
        head = f"not run: {message}" if isinstance(message, str) else "not run"
    elif code is not None:
        head = f"error {code}: {message}"
    elif "exitCode" in output:
        head = f"exit {output['exitCode']}"
        if "signal" in output:
            head += f" ({output['signal']})"
        if isinstance(output.get("durationMs"), int):
            head += f" · {output['durationMs'] / 1000:.1f}s"
    elif output.get("ok") is True and isinstance(output.get("path"), str):
        head = f"ok · {output['path']}"
        if isinstance(output.get("bytes"), int):
            head += f" ({output['bytes']} bytes)"
    else:
        return [_cut(_compact(output), EXCERPT_CHARS)]
    lines = [_cut(head, EXCERPT_CHARS)]
    text = output.get("output")
    if isinstance(text, str) and text.strip():
        body = text.rstrip("\n").split("\n")
        lines += [_cut(line, EXCERPT_CHARS) for line in body[:EXCERPT_LINES]]
        if len(body) > EXCERPT_LINES:
            lines.append(f"… {len(body) - EXCERPT_LINES} more lines")
    return lines


def result_text(output: Any, indent: str = "    ") -> str:
    """The result as printed: ``→`` before the status line, the excerpt indented below."""
    head, *rest = result_lines(output)
    return "\n".join([f"{indent}→ {head}", *(f"{indent}  {line}" for line in rest)])
