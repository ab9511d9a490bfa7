"""How the chat asks before a tool changes the machine (SPEC.md R38). Pure.

The question shows the exact call: the command ``bash`` would run, or the unified diff a file
edit would make, and the rule that "always" would remember. The answer is one of ``y`` (run
it this once), ``n`` (do not; the model is told), ``a`` (always: remember the rule for this
workspace, then run it). Anything else, an empty line included, is no: a careless Enter must
never run a command.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from segue._tools.gate import Answer, ApprovalRequest

#: The prompt the loop reads the answer with (the TUI recognizes it and shows its dialog).
APPROVAL_PROMPT = "Allow? [y/N/a] "

Tone = Literal["plain", "added", "removed", "hunk", "note"]


@dataclass(frozen=True)
class Shown:
    text: str
    tone: Tone = "plain"


def parse_answer(text: str) -> Answer:
    word = text.strip().lower()
    if word in ("y", "yes"):
        return Answer.YES
    if word in ("a", "always"):
        return Answer.ALWAYS
    return Answer.NO


def headline(request: ApprovalRequest) -> str:
    if request.tool == "bash":
        return "bash wants to run this command:"
    if request.tool in ("file_write", "file_edit"):
        return f"{request.tool} wants to change {request.input.get('path')!s}:"
    return f"{request.tool} (a tool that may change the machine) wants to run with:"


def preview_lines(request: ApprovalRequest) -> list[Shown]:
    """The call, line by line, with a diff's lines toned for colour."""
    out: list[Shown] = []
    diff = request.tool in ("file_write", "file_edit")
    for line in request.preview.splitlines() or [""]:
        tone: Tone = "plain"
        if diff and line.startswith(("+++", "---")):
            tone = "note"
        elif diff and line.startswith("+"):
            tone = "added"
        elif diff and line.startswith("-"):
            tone = "removed"
        elif diff and line.startswith("@@"):
            tone = "hunk"
        out.append(Shown(line, tone))
    return out


def choices(request: ApprovalRequest) -> str:
    if request.not_rememberable is not None:
        return (
            "y runs it once · n does not (the model is told) · a runs it once too: no rule "
            f"is remembered for it ({request.not_rememberable})"
        )
    return (
        "y runs it once · n does not (the model is told) · a always allows "
        f"{request.pattern} in this workspace"
    )


def remembered(request: ApprovalRequest) -> str:
    """What the chat says after "always"."""
    if request.not_rememberable is not None:
        return f"ran once; nothing remembered ({request.not_rememberable})"
    return f"remembered for this workspace: allow {request.pattern}"
