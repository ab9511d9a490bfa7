"""Where ``segue run`` takes its prompt from (SPEC.md §5): the argument, ``-f FILE``, ``-``, and
standard input when it is a pipe or a file.

``cat err.log | segue run "explain"`` sends both: the argument first, then a blank line, then
what came through the pipe. A prompt of any size works this way (an argument is limited by
the system's ``ARG_MAX``; a file or a pipe is not).

Standard input is read only when it is a pipe, a socket or a redirected file, never when it
is a terminal or a character device (``/dev/null``), so ``segue run "hi"`` typed at a prompt
or started by a scheduler never waits for input nobody will give.
"""

from __future__ import annotations

import io
import os
import stat
import sys
from pathlib import Path
from typing import BinaryIO

from segue._errors import UsageError

STDIN = "-"


def _decode(data: bytes, where: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"{where} is not UTF-8 text (byte {exc.start}); the prompt must be text"
        ) from None


def stdin_is_piped(stream: BinaryIO | None = None) -> bool:
    """Whether standard input is a pipe, a socket or a regular file (not a terminal)."""
    stream = stream if stream is not None else sys.stdin.buffer
    try:
        mode = os.fstat(stream.fileno()).st_mode
    except (OSError, ValueError, io.UnsupportedOperation):
        return False  # no descriptor (an embedding caller's stream): nothing is piped
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISREG(mode)


def read_prompt(
    argument: str | None, file: Path | None, *, stdin: BinaryIO | None = None
) -> str:
    """The prompt the user meant; a UsageError when there is none or a part is unreadable."""
    stream = stdin if stdin is not None else sys.stdin.buffer
    parts: list[str] = []
    from_stdin = argument == STDIN
    if argument is not None and not from_stdin:
        parts.append(argument)
    if file is not None:
        if str(file) == STDIN:
            from_stdin = True
        else:
            try:
                data = file.read_bytes()
            except OSError as exc:
                raise UsageError(f"cannot read {file}: {exc.strerror or exc}") from None
            parts.append(_decode(data, str(file)))
    if from_stdin or stdin_is_piped(stream):
        piped = _decode(stream.read(), "standard input")
        if piped.strip() or from_stdin:
            parts.append(piped)
    text = "\n\n".join(part for part in parts if part)
    if not text.strip():
        raise UsageError("no prompt: give PROMPT, -f FILE, or pipe it on standard input (or -)")
    return text
