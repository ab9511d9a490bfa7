"""The Tool protocol and the registry.

A tool takes a JSON object and returns a JSON-serializable value. A tool that fails for a
reason the model should see (bad arguments, a file that does not exist) returns an error
object rather than raising; only an unexpected bug raises. The registry keeps the full tool
map for execution; which schemas are advertised is the policy's business (R12, R20).

Tools may also come from a lazy :class:`ToolSource` (MCP servers): loaded the first time the
registry is asked about its tools, closed with :meth:`ToolRegistry.close`. When the
advertised schemas would not fit the caller's share (``fits``), deferrable tools wait behind
``tool_search`` (:mod:`segue._tools.deferral`).
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


@dataclass(frozen=True)
class Proceed:
    """Approval's "go ahead, and tell the model this": the call runs and its result carries
    ``notice`` as ``approvalNotice`` (a protected file written in ``full`` mode)."""

    notice: str


#: Approval (R38): given the tool and its input, None (or :class:`Proceed`) to go ahead, or
#: the result to record instead of running it (see :mod:`segue._tools.gate`). A tool says it
#: only reads with a ``read_only = True`` attribute; without one it is taken to change the
#: machine.
Approve = Callable[["Tool", Mapping[str, Any]], "dict[str, Any] | Proceed | None"]


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
    the :mod:`segue._errors` tree, which is what segue raises to its callers)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def to_obj(self) -> dict[str, Any]:
        return tool_error(self.code, self.message)


@runtime_checkable
class ToolSource(Protocol):
    """Tools that are expensive to get (a server to start): loaded once, on first use."""

    def load(self) -> list[Tool]: ...

    def close(self) -> None: ...


def _schema(tool: Tool) -> dict[str, Any]:
    return {"name": tool.name, "description": tool.description, "input_schema": dict(tool.schema)}


class ToolRegistry:
    def __init__(self, tools: Iterable[Tool] = (), *, defer_percent: int | None = None) -> None:
        # Imported here: segue._tools.deferral builds on this module's Tool and tool_error.
        from segue._tools.deferral import DEFAULT_PERCENT, ToolSearch

        self._tools: dict[str, Tool] = {}
        self._sources: list[ToolSource] = []
        self._pending: list[ToolSource] = []
        #: R20: share of the window (percent) the advertised schemas may take before
        #: deferrable schemas wait behind ``tool_search``.
        self.defer_percent = DEFAULT_PERCENT if defer_percent is None else defer_percent
        self.search = ToolSearch()
        self.deferring = False
        for tool in tools:
            self.add(tool)

    def add_source(self, source: ToolSource) -> None:
        self._sources.append(source)
        self._pending.append(source)

    def _load(self) -> None:
        while self._pending:
            source = self._pending.pop(0)
            for tool in source.load():
                if tool.name in self._tools:
                    continue  # a built-in keeps its name; the later tool is not offered
                self._tools[tool.name] = tool

    def close(self) -> None:
        """Stop every loaded source (an MCP server's process); the registry stays usable for
        built-ins."""
        for source in self._sources:
            source.close()
        self._pending.clear()

    def add(self, tool: Tool) -> None:
        if tool.name in self._tools:
            raise ValueError(f"tool {tool.name!r} registered twice")
        self._tools[tool.name] = tool

    def names(self) -> list[str]:
        self._load()
        return list(self._tools)

    def get(self, name: str) -> Tool | None:
        self._load()
        return self._tools.get(name)

    def advertised(
        self,
        allowed: Callable[[str], bool],
        *,
        fits: Callable[[list[dict[str, Any]]], bool] | None = None,
    ) -> list[dict[str, Any]]:
        """Schemas of the tools the policy allows, in registration order. With ``fits`` (does
        this list of schemas fit the share of the window?) and deferrable tools that do not
        fit, those wait behind ``tool_search`` except the ones it already activated (R20)."""
        self._load()
        from segue._tools.deferral import is_deferrable

        tools = [t for t in self._tools.values() if allowed(t.name)]
        every = [_schema(t) for t in tools]
        deferrable = [t for t in tools if is_deferrable(t)]
        self.deferring = bool(deferrable) and fits is not None and not fits(every)
        if fits is None or not self.deferring:
            self.search.candidates = []
            return every
        active = self.search.active
        self.search.fits = fits
        self.search.candidates = [t for t in deferrable if t.name not in active]
        shown = [t for t in tools if not is_deferrable(t) or t.name in active]
        return [*(_schema(t) for t in shown), _schema(self.search)]

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
        self._load()
        if name == self.search.name and self.deferring and name not in self._tools:
            # Offered only while schemas are deferred; it reveals only allowed tools.
            return self.search.run(args) if isinstance(args, Mapping) else tool_error(
                "invalid_argument", "tool input must be a JSON object"
            )
        tool = self._tools.get(name)
        if tool is None:
            return tool_error("unknown_tool", f"no tool named {name!r}")
        if not allowed(name):
            return tool_error("tool_not_allowed", f"tool {name!r} is not allowed for this agent")
        if not isinstance(args, Mapping):
            return tool_error("invalid_argument", "tool input must be a JSON object")
        verdict = approve(tool, args) if approve is not None else None
        if isinstance(verdict, dict):
            return verdict
        if cancelled is not None and isinstance(tool, Cancellable):
            result = tool.run_cancellable(args, cancelled)
        else:
            result = tool.run(args)
        if isinstance(verdict, Proceed) and isinstance(result, dict):
            result = {**result, "approvalNotice": verdict.notice}
        return result
