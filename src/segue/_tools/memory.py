"""``memory``: the model's tool over the workspace's memory files (:mod:`segue._memory.store`).

Writes are atomic (temp file, fsync, rename); the notes file is capped at 8 KiB (R14); a save
of unchanged content leaves the file and its modification time alone (the window's memory
context, and so the prompt cache, does not move for it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from segue._fsutil import atomic_write
from segue._memory.hot import NOTES_BYTES, NOTES_NAME
from segue._memory.store import FILE_BYTES, PREFIX, load_memories, resolve
from segue._tools.base import tool_error
from segue._workspace import Layout


class MemoryTool:
    """``memory``: view, write or append a workspace memory file."""

    name = "memory"
    #: R38 lists what changes the machine (bash, file_write, file_edit, tools marked so); the
    #: memory tool only reads and writes segue's own memory files under SEGUE_HOME, and the
    #: notes a rollover relies on (R14) must not wait for an approval `segue run` cannot give.
    read_only = True
    description = (
        "Read and write workspace memory files under /memories/workspace/. Use "
        f"{PREFIX}{NOTES_NAME} (at most 8 KiB) for notes that must survive a context window "
        "rollover. Commands: view (path, or omit path to list files), write (path, content), "
        "append (path, content)."
    )

    def __init__(self, layout: Layout) -> None:
        self._layout = layout

    @property
    def schema(self) -> Mapping[str, Any]:
        return {
            "type": "object",
            "properties": {
                "command": {"type": "string", "enum": ["view", "write", "append"]},
                "path": {"type": "string"},
                "content": {"type": "string"},
            },
            "required": ["command"],
            "additionalProperties": False,
        }

    def run(self, args: Mapping[str, Any]) -> Any:
        command = args.get("command")
        if command == "view" and args.get("path") is None:
            return {"ok": True, "files": [PREFIX + m.name for m in load_memories(self._layout)]}
        target = resolve(self._layout, args.get("path"))
        if target is None:
            return tool_error(
                "invalid_argument", f"path must look like {PREFIX}<name>.md (letters, digits, ._-)"
            )
        if command == "view":
            if not target.is_file():
                return tool_error("not_found", f"{args.get('path')} does not exist")
            text = target.read_bytes()[:FILE_BYTES].decode("utf-8", "replace")
            return {"ok": True, "content": text}
        content = args.get("content")
        if command not in ("write", "append") or not isinstance(content, str):
            return tool_error("invalid_argument", "write/append need a string 'content'")
        old = target.read_bytes() if command == "append" and target.is_file() else b""
        data = old + content.encode("utf-8", "surrogatepass")
        limit = NOTES_BYTES if target.name == NOTES_NAME else FILE_BYTES
        if len(data) > limit:
            return tool_error("too_large", f"{target.name} may hold at most {limit} bytes")
        if target.is_file() and target.read_bytes() == data:
            # Unchanged: leave the file (and its modification time) alone.
            return {"ok": True, "path": PREFIX + target.name, "bytes": len(data),
                    "unchanged": True}
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, data)
        return {"ok": True, "path": PREFIX + target.name, "bytes": len(data)}
