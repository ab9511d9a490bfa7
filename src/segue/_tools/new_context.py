"""The ``new_context`` tool (SPEC.md R37, §4): the model asks for a fresh context window.

The tool object carries the name, description and schema the provider is offered, and the
input check. The rollover itself is the turn's job (it owns the window, the store and the
budget): a turn answers a call to this tool at its settled step (``segue._session.turn``).
Called anywhere else, the tool says it cannot act.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from segue._tools.base import tool_error

NEW_CONTEXT_TOOL = "new_context"

DESCRIPTION = (
    "Start a fresh context window now, at a good stopping point. Nothing is summarized: every "
    "earlier message stays on disk and session_history can look it up. Give a short reason."
)
SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {"reason": {"type": "string", "description": "why a fresh window helps now"}},
    "required": ["reason"],
    "additionalProperties": False,
}


def not_allowed(message: str) -> dict[str, Any]:
    return tool_error("not_allowed", message)


def reason_of(args: Mapping[str, Any]) -> str | dict[str, Any]:
    """The call's reason, or the error object its input earns."""
    reason = args.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        return tool_error("invalid_argument", "reason must be a non-empty string")
    return reason


class NewContextTool:
    """``new_context`` as registered with the built-in tools (read-only: it changes only the
    transcript's windowing, never the machine)."""

    name = NEW_CONTEXT_TOOL
    description = DESCRIPTION
    read_only = True

    @property
    def schema(self) -> Mapping[str, Any]:
        return SCHEMA

    def run(self, args: Mapping[str, Any]) -> Any:
        checked = reason_of(args)
        if isinstance(checked, dict):
            return checked
        return not_allowed("new_context acts only inside a running turn")
