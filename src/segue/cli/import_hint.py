"""Which other agent wrote a transcript that is not a Xum session file, so that a refused
``segue history import FILE`` can say which ``--from`` it needs. Pure."""

from __future__ import annotations

import json
import shlex

#: Line types of a Codex rollout file (``{"timestamp", "type", "payload"}``).
_CODEX_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context"})


def other_format(data: bytes) -> str | None:
    """``claude-code`` or ``codex`` when the file's first row is one of theirs, else None."""
    for raw in data.splitlines()[:20]:
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except ValueError:
            return None
        if not isinstance(obj, dict):
            return None
        if "sessionId" in obj and "uuid" in obj:
            return "claude-code"
        if "payload" in obj and obj.get("type") in _CODEX_TYPES:
            return "codex"
        return None
    return None


def import_hint(data: bytes, file: str) -> str:
    """The sentence to add to the refusal, or ``""``."""
    fmt = other_format(data)
    if fmt is None:
        return ""
    return (f"; this looks like a {fmt} transcript: "
            f"segue history import --from {fmt} {shlex.quote(file)}")
