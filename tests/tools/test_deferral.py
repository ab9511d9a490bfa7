"""Tool search (R20): deferrable schemas wait behind ``tool_search`` when the allowed ones do
not fit the caller's share; a found tool is advertised from the next advertisement on."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from segue._tools.base import FunctionTool, ToolRegistry


@dataclass(frozen=True)
class Remote:
    name: str
    description: str
    deferrable: bool = True

    @property
    def schema(self) -> Mapping[str, Any]:
        return {"type": "object"}

    def run(self, args: Mapping[str, Any]) -> Any:
        return {"ok": True, "ran": self.name}


class Source:
    def __init__(self, tools: list[Any]) -> None:
        self.tools = tools
        self.loads = 0
        self.closed = False

    def load(self) -> list[Any]:
        self.loads += 1
        return self.tools

    def close(self) -> None:
        self.closed = True


def _registry() -> tuple[ToolRegistry, Source]:
    builtin = FunctionTool("file_read", "Read a file.", {"type": "object"}, lambda a: "x")
    source = Source([
        Remote("mcp__w__forecast", "Weather forecast for a town."),
        Remote("mcp__w__alerts", "Storm alerts."),
        Remote("mcp__db__drop", "Drop a weather table."),
    ])
    registry = ToolRegistry([builtin])
    registry.add_source(source)
    return registry, source


def _names(schemas: list[dict[str, Any]]) -> list[str]:
    return [s["name"] for s in schemas]


def never(schemas: list[dict[str, Any]]) -> bool:
    """Too many for the share as a whole; a couple of activated ones fit."""
    return len(schemas) <= 2


def test_sources_load_once_lazily_and_close() -> None:
    registry, source = _registry()
    assert source.loads == 0  # nothing started by building the registry
    registry.advertised(lambda _n: True)
    registry.names()
    assert source.loads == 1
    registry.close()
    assert source.closed


def test_everything_is_advertised_when_it_fits() -> None:
    registry, _ = _registry()
    shown = registry.advertised(lambda _n: True, fits=lambda _s: True)
    assert _names(shown) == ["file_read", "mcp__w__forecast", "mcp__w__alerts", "mcp__db__drop"]
    assert registry.run("tool_search", {"query": "x"}, lambda _n: True)["error"]["code"] == (
        "unknown_tool"
    )


def test_deferred_then_found_then_advertised_next_time() -> None:
    registry, _ = _registry()
    allowed = lambda name: name != "mcp__db__drop"  # noqa: E731
    first = registry.advertised(allowed, fits=never)
    assert _names(first) == ["file_read", "tool_search"]
    found = registry.run("tool_search", {"query": "weather"}, allowed)
    # The policy's refusal holds inside the search: the drop tool is never found.
    assert [t["name"] for t in found["tools"]] == ["mcp__w__forecast"]
    second = registry.advertised(allowed, fits=never)
    assert _names(second) == ["file_read", "mcp__w__forecast", "tool_search"]
    assert registry.run("mcp__w__forecast", {}, allowed) == {"ok": True, "ran": "mcp__w__forecast"}
    assert registry.run("mcp__db__drop", {}, allowed)["error"]["code"] == "tool_not_allowed"


def test_select_and_bad_arguments() -> None:
    registry, _ = _registry()
    registry.advertised(lambda _n: True, fits=never)
    picked = registry.run("tool_search", {"query": "select:mcp__w__alerts"}, lambda _n: True)
    assert [t["name"] for t in picked["tools"]] == ["mcp__w__alerts"]
    for bad in ({}, {"query": " "}, {"query": "a", "limit": 0}, {"query": "a", "more": 1}):
        assert registry.run("tool_search", bad, lambda _n: True)["ok"] is False
    none = registry.run("tool_search", {"query": "spreadsheet"}, lambda _n: True)
    assert none["tools"] == []


def test_activation_stays_within_the_share() -> None:
    registry, _ = _registry()

    def one_schema(schemas: list[dict[str, Any]]) -> bool:
        return len(schemas) <= 1

    registry.advertised(lambda _n: True, fits=one_schema)  # 4 schemas: deferred
    found = registry.run("tool_search", {"query": "weather"}, lambda _n: True)
    assert [t["name"] for t in found["tools"]] == ["mcp__w__forecast"]
    assert [t["name"] for t in found["notActivated"]] == ["mcp__db__drop"]
    shown = registry.advertised(lambda _n: True, fits=one_schema)
    assert _names(shown) == ["file_read", "mcp__w__forecast", "tool_search"]
