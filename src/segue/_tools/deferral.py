"""Tool search (SPEC.md R20): deferred schemas behind a ``tool_search`` tool.

When the schemas the policy allows would take more than a share of the model's window
(default :data:`DEFAULT_PERCENT` %), the schemas of *deferrable* tools (those with
``deferrable = True``: MCP tools) are not advertised. The model sees ``tool_search``
instead; the tools it finds are *activated* and advertised from the next provider step on
(the request of the step that searched was already sent). Non-deferrable tools (the
built-ins) are always advertised.

Invariants:

* preflight counts only what is advertised (the caller passes these schemas to the counter);
  the registry keeps every tool for execution, so a call to a deferred tool that the model
  names without searching still runs (it was allowed all along);
* ``tool_search`` finds only tools the policy allows (it searches the allowed, deferred set
  computed at the last advertisement), so it never widens R12; activation lasts for the
  registry's life (one session);
* the activated schemas together stay within the same share (a found tool that would push
  them past it is listed but not activated), so activation cannot by itself make every later
  step too large; each step is still counted again with what it advertises (R20).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from segue._tools.base import Tool, tool_error

NAME = "tool_search"
DEFAULT_PERCENT = 10
MAX_RESULTS = 5

DESCRIPTION = (
    "Find tools that are available but not yet shown to you (their schemas are deferred to "
    "save context). Give words describing what you need, or 'select:NAME1,NAME2' for exact "
    "names. Matching tools are listed and become callable with their full schemas from your "
    "next step."
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "words, or select:NAME1,NAME2"},
        "limit": {"type": "integer", "minimum": 1, "maximum": MAX_RESULTS},
    },
    "required": ["query"],
    "additionalProperties": False,
}


def is_deferrable(tool: Tool) -> bool:
    return getattr(tool, "deferrable", False) is True


class ToolSearch:
    """The ``tool_search`` tool of one registry; holds the activated names."""

    name = NAME
    description = DESCRIPTION
    read_only = True

    def __init__(self) -> None:
        self.active: set[str] = set()
        self.candidates: list[Tool] = []
        #: Whether a list of schemas fits the share (set at each advertisement).
        self.fits: Callable[[list[dict[str, Any]]], bool] = lambda _schemas: True
        self._schemas: dict[str, dict[str, Any]] = {}

    @property
    def schema(self) -> Mapping[str, Any]:
        return SCHEMA

    def run(self, args: Mapping[str, Any]) -> Any:
        query = args.get("query")
        limit = args.get("limit", MAX_RESULTS)
        if set(args) - {"query", "limit"}:
            return tool_error("invalid_argument", "tool_search takes only 'query' and 'limit'")
        if not isinstance(query, str) or not query.strip():
            return tool_error("query_required", "give words to search for, or select:NAME")
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_RESULTS:
            return tool_error("invalid_argument", f"limit must be 1 to {MAX_RESULTS}")
        found = _match(self.candidates, query)[:limit]
        activated, full = [], []
        for tool in found:
            schema = {"name": tool.name, "description": tool.description,
                      "input_schema": dict(tool.schema)}
            if self.fits([*self._schemas.values(), schema]):
                self._schemas[tool.name] = schema
                self.active.add(tool.name)
                activated.append(tool)
            else:
                full.append(tool)
        out: dict[str, Any] = {
            "ok": True,
            "tools": [{"name": t.name, "description": t.description} for t in activated],
            "note": (
                "these tools are callable from your next step" if activated
                else "no deferred tool matches; try other words" if not full
                else "found, but the share of the context for tool schemas is used up"
            ),
        }
        if full:
            out["notActivated"] = [{"name": t.name, "description": t.description} for t in full]
        return out


def _match(tools: Sequence[Tool], query: str) -> list[Tool]:
    text = query.strip()
    if text.startswith("select:"):
        wanted = {n.strip() for n in text.removeprefix("select:").split(",") if n.strip()}
        return [t for t in tools if t.name in wanted]
    words = [w for w in text.lower().split() if w]
    scored: list[tuple[int, int, Tool]] = []
    for index, tool in enumerate(tools):
        name, body = tool.name.lower(), tool.description.lower()
        if not all(w in name or w in body for w in words):
            continue
        scored.append((-sum(w in name for w in words), index, tool))
    return [t for _, _, t in sorted(scored, key=lambda s: (s[0], s[1]))]
