"""Which other agent wrote a transcript that is not a Xum session file, so that a refused
``segue history import FILE`` can say which ``--from`` it needs. Pure; the format is told by
the importers' own detector (:func:`segue._importers.sniff.sniff`)."""

from __future__ import annotations

import shlex

from segue._importers.sniff import sniff


def other_format(data: bytes) -> str | None:
    """``claude-code`` or ``codex`` when the file's first rows are one of theirs, else None."""
    found = sniff(data.splitlines())
    return found if found in ("claude-code", "codex") else None


def import_hint(data: bytes, file: str) -> str:
    """The sentence to add to the refusal, or ``""``."""
    fmt = other_format(data)
    if fmt is None:
        return ""
    return (f"; this looks like a {fmt} transcript: "
            f"segue history import --from {fmt} {shlex.quote(file)}")
