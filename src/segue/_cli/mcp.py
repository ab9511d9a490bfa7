"""``segue mcp serve [-w ID]``: session_history for any MCP client, on stdio (SPEC.md §9).

Standard output belongs to the protocol: nothing else is printed there. Errors before the
server starts (the ``mcp`` extra missing, a bad workspace id, a workspace that does not
exist) are one line on stderr.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import click

from segue._errors import UsageError
from segue._workspace import validate_workspace_id

if TYPE_CHECKING:
    from segue._cli.context import CliContext


@click.group("mcp")
def mcp_group() -> None:
    """Speak the Model Context Protocol (needs the extra: pip install 'segue[mcp]')."""


@mcp_group.command("serve")
@click.option(
    "-w",
    "--workspace",
    "workspace_id",
    default=None,
    help="Workspace to serve (default: the global -w, or the current directory's).",
)
@click.pass_context
def serve_cmd(ctx: click.Context, workspace_id: str | None) -> None:
    """Serve session_history over a workspace on stdin/stdout until the client disconnects.

    Register it with Claude Code: claude mcp add segue -- segue mcp serve -w ID
    """
    root: CliContext = ctx.find_root().obj
    wid = root.workspace_id if workspace_id is None else workspace_id
    try:
        validate_workspace_id(wid)
    except UsageError as exc:
        raise click.UsageError(exc.message) from None
    from segue._mcp.server import require_sdk, serve

    require_sdk()  # first: without the extra, say how to install it
    # A misspelt id (in an MCP client's config) says so, as `history tool` does, instead of
    # serving an empty workspace for ever.
    chosen = replace(root, workspace_id=wid)
    chosen.require_workspace()
    # The workspace's configured store (--store / store.url): PostgreSQL when one is set,
    # never the JSONL files a migrate left behind (R11: they know nothing of its floors).
    serve(chosen.layout, chosen.store() if chosen.store_url is not None else None)
