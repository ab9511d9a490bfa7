"""The R36 filters as pure predicates over rows, shared by the scan and the index. Pure."""

from __future__ import annotations

from segue._messages import Row


def tool_names(row: Row) -> list[str]:
    """Names of the tools this row holds a call of (``dynamic-tool`` and ``tool-NAME`` parts),
    in order, without repeats."""
    names: list[str] = []
    for part in row.parts:
        if part.type == "dynamic-tool" or part.type.startswith("tool-"):
            name = part.toolName or part.type.removeprefix("tool-")
            if name and name not in names:
                names.append(name)
    return names


def row_passes(row: Row | None, role: str | None, tool_name: str | None) -> bool:
    """Whether an item's row passes the filters (an item always has its row)."""
    if row is None:
        return role is None and tool_name is None
    if role is not None and row.role != role:
        return False
    return tool_name is None or tool_name in tool_names(row)
