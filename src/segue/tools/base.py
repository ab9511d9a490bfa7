"""The Tool protocol and the registry.

A tool takes a JSON object and returns a JSON-serializable value. A tool that fails for a
reason the model should see (bad arguments, a file that does not exist) returns an error
object rather than raising; only an unexpected bug raises. The registry keeps the full tool
map for execution; which schemas are advertised is the policy's business (R12, R20).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Tool(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def schema(self) -> Mapping[str, Any]:
        """JSON schema of the input object."""
        ...

    def run(self, args: Mapping[str, Any]) -> Any: ...


#: Approval (R38): given the tool and its input, None to go ahead or the result to record
#: instead of running it (see :mod:`segue.tools.gate`). A tool says it only reads with a
#: ``read_only = True`` attribute; without one it is taken to change the machine.
Approve = Callable[["Tool", Mapping[str, Any]], "dict[str, Any] | None"]


@runtime_checkable
class Cancellable(Protocol):
    """A tool that can stop early when the turn is cancelled (a long shell command)."""

    def run_cancellable(self, args: Mapping[str, Any], cancelled: Callable[[], bool]) -> Any: ...


@dataclass(frozen=True)
class FunctionTool:
    """A tool made from a plain function (handy for tests and small extensions)."""

    name: str
    description: str
    input_schema: Mapping[str, Any]
    fn: Callable[[Mapping[str, Any]], Any]
    #: R38: True only for a tool that changes nothing outside segue; unknown means it may.
    read_only: bool = False

    @property
    def schema(self) -> Mapping[str, Any]:
        return self.input_schema

    def run(self, args: Mapping[str, Any]) -> Any:
        return self.fn(args)


def tool_error(code: str, message: str) -> dict[str, Any]:
    return {"ok": False, "error": {"code": code, "message": message}}


class ToolRefusal(Exception):
    """A reason the model should see, raised deep inside a tool and turned into
    :func:`tool_error` by that tool's ``run``; it never escapes a tool (so it is not part of
    the :mod:`segue.errors` tree, which is what segue raises to its callers)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def to_obj(self) -> dict[str, Any]:
        return tool_error(self.code, self.message)


class ToolRegistry:
    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.add(tool)

    def add(self, tool: Tool) -> None:
        if tool.name in self._tools:
            raise ValueError(f"tool {tool.name!r} registered twice")
        self._tools[tool.name] = tool

    def names(self) -> list[str]:
        return list(self._tools)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def advertised(self, allowed: Callable[[str], bool]) -> list[dict[str, Any]]:
        """Schemas of the tools the policy allows, in registration order."""
        return [
            {"name": t.name, "description": t.description, "input_schema": dict(t.schema)}
            for t in self._tools.values()
            if allowed(t.name)
        ]

    def run(
        self,
        name: str,
        args: Mapping[str, Any],
        allowed: Callable[[str], bool],
        cancelled: Callable[[], bool] | None = None,
        approve: Approve | None = None,
    ) -> Any:
        """Run a tool call; unknown or disallowed tools answer with an error object, and so
        does a call ``approve`` turns down (it is then not run). A tool that can stop early
        (:class:`Cancellable`) is told how to see a cancelled turn."""
        tool = self._tools.get(name)
        if tool is None:
            return tool_error("unknown_tool", f"no tool named {name!r}")
        if not allowed(name):
            return tool_error("tool_not_allowed", f"tool {name!r} is not allowed for this agent")
        if not isinstance(args, Mapping):
            return tool_error("invalid_argument", "tool input must be a JSON object")
        if approve is not None and (denied := approve(tool, args)) is not None:
            return denied
        if cancelled is not None and isinstance(tool, Cancellable):
            return tool.run_cancellable(args, cancelled)
        return tool.run(args)
