"""Request assembly: the system text and the window a request is built from. Pure.

The system text is the agent's prompt followed by the memory entries (R15). Request rows are
the active window's provider-eligible rows (:mod:`segue._context.active`). The assembled request
is counted with the model's real encoding before it is sent, and the provider receives that
same object (R21: no second assembly).
"""

from __future__ import annotations

from collections.abc import Sequence

from segue._context.active import active_rows
from segue._context.boundaries import (
    ROOT_WINDOW_ID,
    WARNING_TYPE,
    is_boundary,
    window_id_of_boundary,
)
from segue._messages import Row


def system_text(agent_prompt: str, memory_entries: Sequence[str]) -> str:
    if not memory_entries:
        return agent_prompt.strip()
    memories = "\n\n".join(memory_entries)
    return f"{agent_prompt.strip()}\n\n# Workspace memory\n\n{memories}"


def current_window_id(window_rows: Sequence[Row]) -> str:
    """The id of the window ``window_rows`` belong to (they start at or after its boundary)."""
    for row in reversed(window_rows):
        if is_boundary(row):
            return window_id_of_boundary(row)
    return ROOT_WINDOW_ID


def warned_in_window(window_rows: Sequence[Row]) -> bool:
    """Whether this window already had its notes warning (R14: once per window)."""
    return any(row.mux_type == WARNING_TYPE for row in active_rows(window_rows))


def last_step_usage(window_rows: Sequence[Row]) -> int:
    """Input + output tokens the provider reported for the window's newest step (0 if none).

    The persisted usage is what a restarted process derives context pressure from (R7).
    """
    for row in reversed(window_rows):
        if is_boundary(row):
            # A reset ends the old window; a compaction row's own usage measured the
            # summarizing request over the old window, not this one's pressure.
            return 0
        usage = row.metadata.get("usage")
        if row.role == "assistant" and isinstance(usage, dict):
            total = 0
            for key in ("inputTokens", "outputTokens"):
                value = usage.get(key)
                if isinstance(value, int) and not isinstance(value, bool):
                    total += value
            return total
    return 0
