"""The built-in tool set of a workspace."""

from __future__ import annotations

from xum.memory.store import MemoryTool
from xum.retrieval.tool import SessionHistoryTool
from xum.tools.base import ToolRegistry
from xum.workspace import Layout


def builtin_tools(layout: Layout) -> ToolRegistry:
    return ToolRegistry([MemoryTool(layout), SessionHistoryTool(layout)])
