"""MCP servers as segue tools (SPEC.md §9, R12, R38).

segue's turn loop is synchronous; the ``mcp`` SDK is async. One background thread per
session runs an asyncio loop on which every configured server lives. A server:

* starts lazily, the first time the session needs the tool list (the first request it
  assembles), never at ``segue --help`` or when settings are read;
* is held open by one task (the SDK's client context must be left by the task that entered
  it) until :meth:`McpTools.close` — the session's end — stops it, which ends the subprocess;
* that cannot start gives no tools, and the reason is reported once through ``on_problem``;
  one that dies later answers every call with ``mcp_server_unavailable``, never a crash;
* answers each call within its ``timeout``; a cancelled turn cancels the call in flight (the
  SDK tells the server) and the tool answers ``cancelled``.

Each tool is ``mcp__<server>__<tool>``, advertised with the server's own description and
input schema, marked deferrable (R20: its schema may wait behind ``tool_search``), and
``read_only`` only when the server's annotations say ``readOnlyHint: true`` *and* the user
marked the server ``trusted`` in settings (R38: a hint from a program is not the user's word;
an untrusted server's tools all ask for approval).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from segue._mcp.config import ServerSpec, tool_name
from segue._tools.base import Tool, tool_error

#: How often a waiting call looks at the cancel flag and the server's health (seconds).
POLL = 0.05
START_TIMEOUT = 60.0
STOP_TIMEOUT = 10.0
MEDIA = "[media omitted]"


class _Loop:
    """An asyncio loop on a daemon thread; coroutines are submitted from the caller's."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="segue-mcp", daemon=True)
        self.thread.start()

    def submit(self, coro: Any) -> concurrent.futures.Future[Any]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(STOP_TIMEOUT)
        if not self.thread.is_alive():
            self.loop.close()


class Server:
    """One configured MCP server and its connection."""

    def __init__(self, spec: ServerSpec, loop: _Loop, workdir: Path) -> None:
        self.spec = spec
        self._loop = loop
        self._workdir = workdir
        self._client: Any = None
        self._stop: asyncio.Event | None = None
        self._held: concurrent.futures.Future[Any] | None = None
        self.failure: str | None = None

    # -- lifecycle ---------------------------------------------------------------------------------

    def _target(self) -> Any:
        if self.spec.url is not None:
            return self.spec.url
        from mcp import StdioServerParameters

        assert self.spec.command is not None
        return StdioServerParameters(
            command=self.spec.command,
            args=list(self.spec.args),
            env=dict(self.spec.env) or None,
            cwd=self.spec.cwd if self.spec.cwd is not None else str(self._workdir),
        )

    def start(self) -> list[Any]:
        """Connect and list the server's tools (every page); raises on failure."""
        ready: concurrent.futures.Future[list[Any]] = concurrent.futures.Future()
        self._held = self._loop.submit(self._hold(ready))
        return ready.result(START_TIMEOUT)

    async def _hold(self, ready: concurrent.futures.Future[list[Any]]) -> None:
        from mcp import Client

        self._stop = asyncio.Event()
        try:
            async with Client(self._target(), read_timeout_seconds=self.spec.timeout) as client:
                tools: list[Any] = []
                cursor: str | None = None
                while True:
                    page = await client.list_tools(cursor=cursor)
                    tools += page.tools
                    cursor = page.next_cursor
                    if not cursor:
                        break
                self._client = client
                ready.set_result(tools)
                await self._stop.wait()
        except BaseException as exc:  # noqa: BLE001 - any end of the connection is reported
            self.failure = _describe(exc)
            if not ready.done():
                ready.set_exception(exc)
        finally:
            self._client = None
            if self.failure is None:
                self.failure = "the server was stopped"

    def alive(self) -> bool:
        return self._client is not None and self._held is not None and not self._held.done()

    def close(self) -> None:
        if self._held is None or self._held.done() or self._stop is None:
            return
        self._loop.loop.call_soon_threadsafe(self._stop.set)
        try:
            self._held.result(STOP_TIMEOUT)
        except (concurrent.futures.TimeoutError, concurrent.futures.CancelledError):
            self._held.cancel()

    # -- calls -----------------------------------------------------------------------------------

    def call(self, name: str, args: Mapping[str, Any], cancelled: Callable[[], bool]) -> Any:
        who = f"MCP server {self.spec.name!r}"
        if not self.alive():
            return tool_error("mcp_server_unavailable", f"{who} is not running: {self.failure}")
        client = self._client
        future = self._loop.submit(client.call_tool(name, dict(args)))
        deadline = time.monotonic() + self.spec.timeout
        while True:
            try:
                result = future.result(POLL)
                break
            except concurrent.futures.TimeoutError:
                if cancelled():
                    future.cancel()
                    return tool_error("cancelled", f"the call to {who} was cancelled")
                if not self.alive():
                    future.cancel()
                    return tool_error(
                        "mcp_server_unavailable", f"{who} stopped during the call: {self.failure}"
                    )
                if time.monotonic() > deadline:
                    future.cancel()
                    return tool_error(
                        "mcp_timeout", f"{who} did not answer within {self.spec.timeout:g} s"
                    )
            except concurrent.futures.CancelledError:
                return tool_error("cancelled", f"the call to {who} was cancelled")
            except Exception as exc:  # noqa: BLE001 - the SDK's errors become a tool result
                return self._failed(exc)
        return _result(result)

    def _failed(self, exc: Exception) -> Any:
        from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        who = f"MCP server {self.spec.name!r}"
        code = getattr(exc, "code", None)
        if code == CONNECTION_CLOSED:
            # The process exited: the connection is over for good, and every later call says so.
            self.failure = "its connection closed (the server process exited)"
            self.close()
            return tool_error("mcp_server_unavailable", f"{who} stopped: {self.failure}")
        if code == REQUEST_TIMEOUT:
            return tool_error(
                "mcp_timeout", f"{who} did not answer within {self.spec.timeout:g} s"
            )
        return tool_error("mcp_call_failed", f"{who}: {_describe(exc)}")


class McpTool:
    """One server tool, as the registry and the policy see it."""

    deferrable = True

    def __init__(self, server: Server, listed: Any) -> None:
        self._server = server
        self.remote_name: str = listed.name
        self.name = tool_name(server.spec.name, listed.name)
        fallback = f"{listed.name} (MCP server {server.spec.name})"
        self.description: str = listed.description or fallback
        self._schema: dict[str, Any] = dict(listed.input_schema or {"type": "object"})
        hints = listed.annotations
        #: R38: read-only only when a server the user trusts says so.
        self.read_only: bool = (
            server.spec.trusted and hints is not None and hints.read_only_hint is True
        )

    @property
    def schema(self) -> Mapping[str, Any]:
        return self._schema

    def run(self, args: Mapping[str, Any]) -> Any:
        return self._server.call(self.remote_name, args, lambda: False)

    def run_cancellable(self, args: Mapping[str, Any], cancelled: Callable[[], bool]) -> Any:
        return self._server.call(self.remote_name, args, cancelled)


class McpTools:
    """The configured servers as a lazy tool source of a
    :class:`~segue._tools.base.ToolRegistry`."""

    def __init__(
        self,
        specs: Iterable[ServerSpec],
        *,
        workdir: Path,
        on_problem: Callable[[str], None] = lambda _msg: None,
    ) -> None:
        self.specs = tuple(specs)
        self._workdir = workdir
        self._on_problem = on_problem
        self._loop: _Loop | None = None
        self._servers: list[Server] = []

    def load(self) -> list[Tool]:
        from segue._mcp.server import require_sdk

        require_sdk()
        self._loop = _Loop()
        tools: list[Tool] = []
        for spec in self.specs:
            server = Server(spec, self._loop, self._workdir)
            self._servers.append(server)
            try:
                listed = server.start()
            except Exception as exc:  # noqa: BLE001 - one broken server must not stop a session
                self._on_problem(
                    f"MCP server {spec.name!r} did not start, its tools are not offered: "
                    f"{_describe(exc)}"
                )
                continue
            tools += [McpTool(server, t) for t in listed]
        return tools

    def close(self) -> None:
        for server in self._servers:
            server.close()
        if self._loop is not None:
            self._loop.close()
            self._loop = None


def _describe(exc: BaseException) -> str:
    # Task groups wrap the cause; the innermost message is the one a person can act on.
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _result(result: Any) -> Any:
    texts: list[str] = []
    for block in result.content:
        kind = getattr(block, "type", None)
        if kind == "text":
            texts.append(block.text)
        elif kind == "resource" and hasattr(block.resource, "text"):
            texts.append(block.resource.text)
        elif kind == "resource_link":
            texts.append(str(block.uri))
        else:
            texts.append(MEDIA)
    text = "\n".join(texts)
    if result.is_error:
        return tool_error("mcp_tool_error", text or "the MCP tool reported an error")
    out: dict[str, Any] = {"ok": True, "content": text}
    if result.structured_content is not None:
        out["structured"] = result.structured_content
    return out
