"""Exact-replace edits. Pure.

``old_string`` must occur exactly once unless ``replace_all`` is set: an edit that could land
in two places is refused rather than guessed, and the refusal names the lines of the first
occurrences so the model can add context to make its string unique.
"""

from __future__ import annotations

from dataclasses import dataclass

from segue._tools.base import ToolRefusal

#: How many occurrence line numbers an ambiguity error lists.
SHOWN_OCCURRENCES = 10


@dataclass(frozen=True)
class Edited:
    text: str
    replacements: int
    first_line: int


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def apply_edit(text: str, old: str, new: str, *, replace_all: bool) -> Edited:
    if old == "":
        raise ToolRefusal(
            "invalid_argument", "old_string must not be empty; use file_write to create a file"
        )
    if old == new:
        raise ToolRefusal("invalid_argument", "old_string and new_string are identical")
    first = text.find(old)
    if first < 0:
        hint = ""
        if old.strip() and old.strip() in text:
            hint = " (it does occur with different leading/trailing whitespace)"
        raise ToolRefusal(
            "no_match", f"old_string does not occur in the file{hint}; read the file again"
        )
    count = text.count(old)
    if count > 1 and not replace_all:
        lines: list[int] = []
        at = first
        while at >= 0 and len(lines) < SHOWN_OCCURRENCES:
            lines.append(_line_of(text, at))
            at = text.find(old, at + len(old))
        listed = ", ".join(str(n) for n in lines)
        raise ToolRefusal(
            "ambiguous_match",
            f"old_string occurs {count} times (at lines {listed}); include more surrounding "
            "text to make it unique, or set replace_all to replace every occurrence",
        )
    result = text.replace(old, new) if replace_all else text.replace(old, new, 1)
    return Edited(result, count if replace_all else 1, _line_of(text, first))
