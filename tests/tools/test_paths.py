"""Every file tool refuses paths that lead outside the workspace directory."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from segue._tools.files import FileEditTool, FileReadTool, FileWriteTool
from segue._tools.paths import Workspace
from segue._tools.search import FileSearchTool


def _outside(result: Any) -> bool:
    return result["ok"] is False and result["error"]["code"] == "path_outside_workspace"


def _escapes(ws: Workspace) -> list[str]:
    root = ws.root
    os.symlink(root.parent / "outside", root / "link-dir")
    os.symlink(root.parent / "outside" / "secret.txt", root / "link-file")
    os.symlink(root.parent / "outside" / "new.txt", root / "dangling")
    return [
        str(root.parent / "outside" / "secret.txt"),  # absolute, outside
        "../outside/secret.txt",  # .. escape
        "sub/../../outside/secret.txt",
        "link-dir/secret.txt",  # through a symlinked directory
        "link-file",  # a symlinked file
        "dangling",  # a dangling symlink whose target is outside
        "/etc/passwd",
    ]


def test_reads_writes_edits_and_searches_outside_are_refused(ws: Workspace) -> None:
    tools = [FileReadTool(ws), FileWriteTool(ws), FileEditTool(ws)]
    for path in _escapes(ws):
        assert _outside(tools[0].run({"path": path})), path
        assert _outside(tools[1].run({"path": path, "content": "x"})), path
        assert _outside(tools[2].run({"path": path, "old_string": "top", "new_string": "x"}))
        assert _outside(FileSearchTool(ws).run({"path": path, "query": "secret"})), path
    outside = ws.root.parent / "outside"
    assert (outside / "secret.txt").read_text() == "top secret\n"
    assert not (outside / "new.txt").exists()
    message = tools[0].run({"path": "../outside/secret.txt"})["error"]["message"]
    assert "outside the workspace" in message


def test_paths_that_stay_inside_are_fine(ws: Workspace) -> None:
    (ws.root / "sub").mkdir()
    (ws.root / "a.txt").write_text("hello\n")
    os.symlink(ws.root / "a.txt", ws.root / "sub" / "alias")
    read = FileReadTool(ws)
    for path in ("a.txt", str(ws.root / "a.txt"), "sub/../a.txt", "./a.txt", "sub/alias"):
        result = read.run({"path": path})
        assert result["ok"] is True, (path, result)
        assert result["path"] == "a.txt"
        assert "hello" in result["content"]


@pytest.mark.parametrize("bad", ["", "   ", 3, None, "a\x00b"])
def test_malformed_paths_are_invalid_arguments(ws: Workspace, bad: Any) -> None:
    result = FileReadTool(ws).run({"path": bad})
    assert result["error"]["code"] == "invalid_argument"


def test_search_does_not_follow_a_symlinked_directory_out(ws: Workspace) -> None:
    os.symlink(ws.root.parent / "outside", ws.root / "out")
    os.symlink(ws.root.parent / "outside" / "secret.txt", ws.root / "leak.txt")
    (ws.root / "mine.txt").write_text("secret of my own\n")
    found = FileSearchTool(ws).run({"query": "secret"})
    assert [m["path"] for m in found["matches"]] == ["mine.txt"]
    listed = FileSearchTool(ws).run({"pattern": "*"})
    assert listed["files"] == ["mine.txt"]


def test_workspace_root_is_resolved_once(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    os.symlink(tmp_path / "real", tmp_path / "alias")
    ws = Workspace.at(tmp_path / "alias")
    assert ws.root == tmp_path.resolve() / "real"
    assert FileWriteTool(ws).run({"path": "x.txt", "content": "1"})["ok"] is True
    assert (tmp_path / "real" / "x.txt").read_text() == "1"


def test_segue_home_inside_the_workspace_is_private(tmp_path: Path) -> None:
    """Running in ~ with the default ~/.segue: file tools must not read transcripts around
    session_history's privacy floor (R11)."""
    from segue import Layout
    from segue._history import HistoryStore
    from segue._tools.builtin import builtin_tools

    work = tmp_path / "home"
    layout = Layout(work / ".segue", "ws")
    layout.session_dir.mkdir(parents=True)
    layout.chat.write_text('{"id":"u","role":"user","parts":[],"metadata":{}} before the floor\n')
    (work / "notes.txt").write_text("before the floor, but mine\n")
    tools = builtin_tools(layout, work, store=HistoryStore(layout))
    allow = lambda _name: True  # noqa: E731
    read = tools.run("file_read", {"path": ".segue/sessions/ws/chat.jsonl"}, allow)
    assert read["ok"] is False
    assert read["error"]["code"] == "path_private"
    absolute = tools.run("file_read", {"path": str(layout.chat)}, allow)
    assert absolute["error"]["code"] == "path_private"
    found = tools.run("file_search", {"query": "before the floor"}, allow)
    assert found["ok"] is True
    assert "chat.jsonl" not in json.dumps(found)
    assert "notes.txt" in json.dumps(found)
    listed = tools.run("file_search", {"glob": "**/*.jsonl"}, allow)
    assert "chat.jsonl" not in json.dumps(listed)
