"""What kind of transcript a file is, from its first lines: to name the format found when a
file holds no conversation of the format asked for. Pure."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

_CODEX_TYPES = frozenset({"session_meta", "response_item", "turn_context", "event_msg",
                          "compacted"})
_CLAUDE_TYPES = frozenset({"user", "assistant", "summary", "system", "file-history-snapshot",
                           "queue-operation", "progress"})
_LOOK = 50

NAMES = {"claude-code": "a Claude Code session", "codex": "a Codex rollout",
         "xum": "a Xum session file"}


def sniff(lines: Iterable[bytes]) -> str | None:
    """``claude-code``, ``codex``, ``xum``, or None when the first lines say nothing."""
    for seen, raw in enumerate(lines):
        if seen >= _LOOK:
            break
        try:
            obj = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        if isinstance(obj, dict):
            found = _one(obj)
            if found is not None:
                return found
    return None


def _one(obj: dict[str, Any]) -> str | None:
    kind = obj.get("type")
    if kind in _CODEX_TYPES and isinstance(obj.get("payload"), dict):
        return "codex"
    if kind in _CLAUDE_TYPES and ("sessionId" in obj or "uuid" in obj or "leafUuid" in obj):
        return "claude-code"
    if isinstance(obj.get("role"), str) and isinstance(obj.get("parts"), list):
        return "xum"
    if "record_type" in obj or ("instructions" in obj and "id" in obj):
        return "codex"
    return None


def described(found: str | None, asked: str) -> str:
    """What to tell the user about a file of kind ``found`` read as ``asked``."""
    if found is None:
        return f"not {NAMES[asked]}, and no format segue imports"
    if found == asked:
        return f"{NAMES[asked]} with no conversation in it (only bookkeeping lines)"
    hint = "import it without --from" if found == "xum" else f"use --from {found}"
    return f"{NAMES[found]}, not {NAMES[asked]} ({hint})"
