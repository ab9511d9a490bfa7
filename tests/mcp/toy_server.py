"""A small MCP server (the ``mcp`` SDK's own low-level server) for the client tests.

Run as ``python toy_server.py MARKER_DIR [FILLERS] [http]``: on stdio, or with ``http`` as
streamable HTTP on a free port of 127.0.0.1, printed as the first line of its output.

Tools: ``echo`` (read-only by its annotations), ``write_note`` (no annotations: not
read-only), ``crash`` (the process dies in the middle of the call), ``slow`` (writes
``MARKER_DIR/slow-started`` and never answers), and FILLERS ``filler_<i>`` tools with long
schemas, so the advertised schemas can outgrow a share of the window. The server writes its
pid to ``MARKER_DIR/pid`` when it starts.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

MARKERS = Path(sys.argv[1])
FILLERS = int(sys.argv[2]) if len(sys.argv) > 2 else 0
OBJECT: dict[str, Any] = {"type": "object", "properties": {"text": {"type": "string"}}}


def _tools() -> list[types.Tool]:
    tools = [
        types.Tool(
            name="echo",
            description="Echo the text back, unchanged.",
            input_schema=OBJECT,
            annotations=types.ToolAnnotations(read_only_hint=True),
        ),
        types.Tool(name="write_note", description="Write a note.", input_schema=OBJECT),
        types.Tool(name="crash", description="Die mid-call.", input_schema=OBJECT),
        types.Tool(name="slow", description="Never answer.", input_schema=OBJECT),
    ]
    for i in range(FILLERS):
        props = {f"field_{j}": {"type": "string", "description": f"filler field {j} " * 4}
                 for j in range(12)}
        tools.append(
            types.Tool(
                name=f"filler_{i}",
                description=f"Filler tool number {i} for the weather in town {i}.",
                input_schema={"type": "object", "properties": props},
            )
        )
    return tools


async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=_tools())


async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    args = params.arguments or {}
    if params.name == "crash":
        os._exit(1)
    if params.name == "slow":
        (MARKERS / "slow-started").write_text("1")
        await anyio.Event().wait()
    if params.name == "write_note":
        (MARKERS / "note.txt").write_text(str(args.get("text", "")))
    text = f"{params.name}: {args.get('text', '')}"
    return types.CallToolResult(content=[types.TextContent(text=text)])


async def main() -> None:
    (MARKERS / "pid").write_text(str(os.getpid()))
    server = Server("toy", on_list_tools=list_tools, on_call_tool=call_tool)
    if len(sys.argv) > 3 and sys.argv[3] == "http":
        await _http(server)
        return
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


async def _http(server: Server[Any]) -> None:
    import socket

    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    print(sock.getsockname()[1], flush=True)
    config = uvicorn.Config(server.streamable_http_app(), log_level="error", lifespan="on")
    await uvicorn.Server(config).serve(sockets=[sock])


if __name__ == "__main__":
    anyio.run(main)
