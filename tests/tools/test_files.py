"""file_read bounds, file_write atomicity and modes, file_edit uniqueness, write scopes."""

from __future__ import annotations

import os
import stat

from segue._tools.files import (
    READ_MAX_BYTES,
    READ_MAX_LINE_CHARS,
    READ_MAX_LINES,
    FileEditTool,
    FileReadTool,
    FileWriteTool,
)
from segue._tools.paths import Workspace
from segue._tools.profile import PLAN_SCOPE


def test_read_pages_by_lines_and_says_where_to_continue(ws: Workspace) -> None:
    (ws.root / "big.txt").write_text("".join(f"line {n}\n" for n in range(1, 5001)))
    read = FileReadTool(ws)
    first = read.run({"path": "big.txt"})
    assert (first["startLine"], first["endLine"]) == (1, READ_MAX_LINES)
    assert first["truncated"] is True and first["nextOffset"] == READ_MAX_LINES + 1
    assert f"continue at line {READ_MAX_LINES + 1}" in first["notice"]
    assert first["content"].splitlines()[0] == "     1\tline 1"
    last = read.run({"path": "big.txt", "offset": 4001})
    assert (last["startLine"], last["endLine"]) == (4001, 5000)
    assert last["truncated"] is False and last["nextOffset"] is None
    assert "line 5000" in last["content"]
    window = read.run({"path": "big.txt", "offset": 10, "limit": 3})
    assert window["content"] == "    10\tline 10\n    11\tline 11\n    12\tline 12\n"
    assert window["nextOffset"] == 13
    past = read.run({"path": "big.txt", "offset": 6000})
    assert past["error"]["code"] == "invalid_argument" and "5000 lines" in past["error"]["message"]


def test_read_is_bounded_in_bytes_and_cuts_giant_lines(ws: Workspace) -> None:
    (ws.root / "wide.txt").write_text(("x" * 1000 + "\n") * 500)
    result = FileReadTool(ws).run({"path": "wide.txt"})
    assert len(result["content"].encode()) <= READ_MAX_BYTES
    assert result["truncated"] is True
    assert result["nextOffset"] == result["endLine"] + 1 < 500
    assert "output limit of 65536 bytes" in result["notice"]
    # A 5 MB single line costs a bounded read, is shown cut, and is marked as cut.
    (ws.root / "minified.js").write_bytes(b"a" * 5_000_000 + b"\nnext\n")
    page = FileReadTool(ws).run({"path": "minified.js"})
    lines = page["content"].splitlines()
    assert f"[line cut at {READ_MAX_LINE_CHARS} characters]" in lines[0]
    assert lines[1] == "     2\tnext"
    assert page["cutLines"] == 1


def test_binary_and_special_files_are_refused(ws: Workspace) -> None:
    (ws.root / "blob.bin").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (ws.root / "latin1.txt").write_bytes("café".encode("latin-1") * 10)
    os.mkfifo(ws.root / "pipe")
    (ws.root / "dir").mkdir()
    read = FileReadTool(ws)
    assert read.run({"path": "blob.bin"})["error"]["code"] == "binary_file"
    assert read.run({"path": "latin1.txt"})["error"]["code"] == "binary_file"
    assert read.run({"path": "pipe"})["error"]["code"] == "not_a_file"
    assert read.run({"path": "dir"})["error"]["code"] == "is_a_directory"
    assert read.run({"path": "missing.txt"})["error"]["code"] == "not_found"
    # A multi-byte character cut by the sniff window does not make a file binary.
    (ws.root / "utf8.txt").write_text("é" * 10_000)
    assert read.run({"path": "utf8.txt"})["ok"] is True


def test_write_creates_directories_overwrites_atomically_and_keeps_the_mode(
    ws: Workspace,
) -> None:
    tracked: list[str] = []
    write = FileWriteTool(ws, track=tracked.append)
    created = write.run({"path": "a/b/c.sh", "content": "echo one\n"})
    assert created["ok"] is True and created["created"] is True and created["path"] == "a/b/c.sh"
    target = ws.root / "a" / "b" / "c.sh"
    target.chmod(0o750)
    again = write.run({"path": "a/b/c.sh", "content": "echo two\n"})
    assert again["created"] is False and again["bytes"] == 9
    assert target.read_text() == "echo two\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o750
    assert tracked == ["a/b/c.sh", "a/b/c.sh"]
    assert [p.name for p in target.parent.iterdir()] == ["c.sh"]  # no temp file left
    assert write.run({"path": "a", "content": "x"})["error"]["code"] == "is_a_directory"
    assert write.run({"path": "x.txt"})["error"]["code"] == "invalid_argument"
    assert tracked == ["a/b/c.sh", "a/b/c.sh"]  # refusals track nothing


def test_edit_requires_a_unique_exact_match(ws: Workspace) -> None:
    (ws.root / "m.py").write_text("a = 1\nb = 1\nc = 2\n")
    tracked: list[str] = []
    edit = FileEditTool(ws, track=tracked.append)

    def run(old: str, new: str, **more: object) -> dict[str, object]:
        result: dict[str, object] = edit.run(
            {"path": "m.py", "old_string": old, "new_string": new, **more}
        )
        return result

    ambiguous = run("= 1", "= 9")
    assert ambiguous["ok"] is False
    error = ambiguous["error"]
    assert isinstance(error, dict)
    assert error["code"] == "ambiguous_match"
    assert "2 times" in error["message"] and "lines 1, 2" in error["message"]
    assert (ws.root / "m.py").read_text() == "a = 1\nb = 1\nc = 2\n"
    missing = run("d = 4", "d = 5")
    assert isinstance(missing["error"], dict) and missing["error"]["code"] == "no_match"
    same = run("a = 1", "a = 1")
    assert isinstance(same["error"], dict) and same["error"]["code"] == "invalid_argument"
    empty = run("", "x")
    assert isinstance(empty["error"], dict) and empty["error"]["code"] == "invalid_argument"
    assert tracked == []

    one = run("b = 1", "b = 7")
    assert one["ok"] is True and one["replacements"] == 1 and one["line"] == 2
    assert (ws.root / "m.py").read_text() == "a = 1\nb = 7\nc = 2\n"
    every = run("a = 1\n", "", replace_all=True)
    assert every["replacements"] == 1
    assert (ws.root / "m.py").read_text() == "b = 7\nc = 2\n"
    assert tracked == ["m.py", "m.py"]


def test_edit_matches_crlf_files_and_refuses_binary(ws: Workspace) -> None:
    (ws.root / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    result = FileEditTool(ws).run({"path": "w.txt", "old_string": "one\ntwo", "new_string": "1\n2"})
    assert result["ok"] is True
    assert (ws.root / "w.txt").read_bytes() == b"1\r\n2\r\nthree\r\n"
    (ws.root / "b.bin").write_bytes(b"\xff\xfe\x00abc")
    refused = FileEditTool(ws).run({"path": "b.bin", "old_string": "abc", "new_string": "x"})
    assert refused["error"]["code"] == "binary_file"


def test_plan_scope_allows_only_plan_files(ws: Workspace) -> None:
    write = FileWriteTool(ws, scope=PLAN_SCOPE)
    edit = FileEditTool(ws, scope=PLAN_SCOPE)
    assert write.run({"path": "PLAN.md", "content": "1. do it\n"})["ok"] is True
    assert write.run({"path": ".segue/plans/next.md", "content": "x"})["ok"] is True
    for path in ("src/app.py", "docs/PLAN.md", ".segue/plans/x.txt", ".segue/agents/exec.md"):
        refused = write.run({"path": path, "content": "x"})
        assert refused["error"]["code"] == "write_not_allowed", path
        assert "PLAN.md" in refused["error"]["message"]
    assert edit.run({"path": "PLAN.md", "old_string": "do it", "new_string": "done"})["ok"]
    (ws.root / "app.py").write_text("x = 1\n")
    refused = edit.run({"path": "app.py", "old_string": "x", "new_string": "y"})
    assert refused["error"]["code"] == "write_not_allowed"
    assert (ws.root / "app.py").read_text() == "x = 1\n"
