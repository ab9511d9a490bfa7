"""The built-in tool set of a workspace (SPEC.md §5): ``file_read``, ``file_write``,
``file_edit``, ``file_search``, ``bash``, ``memory``, ``session_history`` and
``new_context`` (R37; the turn carries its rollover out).

The file and shell tools are pinned to ``workdir`` (the workspace directory); writes and
edits are recorded in the workspace's edited-file carryover. ``write_scope`` narrows where
the file tools may write (the ``plan`` agent's profile, :mod:`segue._tools.profile`);
``pass_env`` the secret-looking variables ``bash`` may see (:mod:`segue._tools.secrets`).
"""

from __future__ import annotations

from pathlib import Path

from segue._history import TranscriptStore
from segue._retrieval.tool import SessionHistoryTool
from segue._tools.base import ToolRegistry
from segue._tools.carryover_file import CarryoverFile
from segue._tools.files import FileEditTool, FileReadTool, FileWriteTool
from segue._tools.memory import MemoryTool
from segue._tools.new_context import NewContextTool
from segue._tools.paths import Workspace
from segue._tools.profile import ANYWHERE, WriteScope
from segue._tools.search import FileSearchTool
from segue._tools.shell import BashTool
from segue._workspace import Layout


def builtin_tools(
    layout: Layout,
    workdir: Path,
    *,
    write_scope: WriteScope = ANYWHERE,
    store: TranscriptStore,
    pass_env: tuple[str, ...] = (),
) -> ToolRegistry:
    workspace = Workspace.at(workdir, private=(layout.home,))
    # The carryover anchors each edit to the transcript's next sequence number, read under
    # the workspace lock of ``store`` (the session's, whichever kind it is).
    carryover = CarryoverFile(layout, store)

    def track(rel: str) -> None:
        carryover.record_edit(workspace.root, rel)

    return ToolRegistry(
        [
            FileReadTool(workspace),
            FileWriteTool(workspace, track=track, scope=write_scope),
            FileEditTool(workspace, track=track, scope=write_scope),
            FileSearchTool(workspace),
            BashTool(workspace, pass_env=pass_env),
            MemoryTool(layout),
            session_history_tool(layout, store),
            NewContextTool(),
        ]
    )


def session_history_tool(
    layout: Layout, store: TranscriptStore | None, *, build_index: bool = True
) -> SessionHistoryTool:
    """``session_history`` over the backend :func:`segue._retrieval.backends.pick_backend`
    picks for ``store`` (the JSONL files and their index, or PostgreSQL).
    ``build_index=False``: a reader that writes nothing (the index is used when trusted)."""
    from segue._retrieval.backends import lookback_tool

    return lookback_tool(layout, store, build_index=build_index)
