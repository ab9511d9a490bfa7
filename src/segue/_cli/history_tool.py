"""``segue history tool [--agent NAME] [JSON]``: exactly what ``session_history`` answers.

With a JSON argument: one call, one line of output. Without: one call per stdin line, each
answered with one line (flushed) before the next is read, so a caller can page with the
cursors, which live only as long as this process (R26).

Answers are the tool's own JSON objects, also for errors the model would see (exit 0). A
line that is not a JSON object answers ``invalid_argument``. With ``--agent``, an agent whose
tool policy does not allow ``session_history`` gets ``tool_not_allowed`` for every call (a
code added to SPEC.md §4's list: the model is never offered the tool then, so only this
command can meet it). An unknown agent or a bad agent file is a usage error (exit 2).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from segue._policy import can_use_session_history, resolve_agent
from segue._retrieval.envelope import error, serialize
from segue._tools.builtin import session_history_tool

if TYPE_CHECKING:
    from segue._cli.context import CliContext
    from segue._retrieval.tool import SessionHistoryTool as Tool


def _answer(tool: Tool | None, agent: str | None, text: str) -> dict[str, Any]:
    try:
        args = json.loads(text)
    except ValueError as exc:
        return error("invalid_argument", f"not JSON: {exc}")
    except RecursionError:
        return error("invalid_argument", "not JSON this tool accepts: nested too deeply")
    if not isinstance(args, dict):
        return error("invalid_argument", "a call must be a JSON object")
    if tool is None:
        return error("tool_not_allowed", f"agent {agent!r} may not use session_history")
    return tool.call(args)


def _emit(result: dict[str, Any]) -> None:
    out = sys.stdout.buffer
    out.write(serialize(result) + b"\n")
    out.flush()


@click.command("tool")
@click.option("--agent", default=None, help="Answer as this agent's tool policy allows.")
@click.argument("call", required=False)
@click.pass_context
def history_tool(ctx: click.Context, agent: str | None, call: str | None) -> None:
    """Answer session_history calls (JSON objects) exactly as the agent sees them.

    \b
    segue history tool '{"action": "list_windows"}'
    printf '%s\\n' '{"action":"search","query":"TODO"}' | segue history tool
    """
    obj: CliContext = ctx.find_root().obj
    obj.require_workspace()  # a misspelt -w says so instead of answering from nothing
    # A read command: it answers from the index when it is trusted and never writes one
    # (the agent's own calls and `segue history reindex` build it), so it also works on a
    # read-only home and changes nothing there.
    tool: Tool | None = session_history_tool(
        obj.layout, obj.store() if obj.store_url is not None else None, build_index=False
    )
    if agent is not None:
        resolved = resolve_agent(agent, Path.cwd())
        if not can_use_session_history(resolved.policy()):
            tool = None
    if call is not None:
        _emit(_answer(tool, agent, call))
        return
    for line in iter(sys.stdin.readline, ""):
        if line.strip():
            _emit(_answer(tool, agent, line))
