from __future__ import annotations

from pathlib import Path

from segue import Layout
from segue._memory.hot import NOTES_NAME, Memory, select_memory
from segue._memory.store import load_memories
from segue._tools.memory import MemoryTool


def words(text: str) -> int:
    return len(text.split())


def mems(n: int) -> list[Memory]:
    return [Memory(f"m{i}.md", f"memory {i}", mtime_ns=i) for i in range(n)]


def test_ordinary_selection_takes_eight_newest() -> None:
    entries = select_memory(mems(10), token_budget_mode=False, count=words)
    assert len(entries) == 8
    # The eight newest, listed by name (never by modification time: see the test below).
    assert [e.split('"')[1] for e in entries] == sorted(f"m{i}.md" for i in range(2, 10))
    assert all('name="m0.md"' not in e and 'name="m1.md"' not in e for e in entries)


def test_saving_a_file_again_leaves_the_selection_text_as_it_was() -> None:
    before = select_memory(mems(5), token_budget_mode=False, count=words)
    touched = [Memory(m.name, m.text, mtime_ns=100 - i) for i, m in enumerate(mems(5))]
    assert select_memory(touched, token_budget_mode=False, count=words) == before


def test_writing_the_same_content_leaves_the_file_untouched(tmp_path: Path) -> None:
    tool = MemoryTool(Layout(tmp_path, "ws"))
    path = "/memories/workspace/build.md"
    assert tool.run({"command": "write", "path": path, "content": "make test"})["ok"]
    target = tmp_path / "memories" / "workspace" / "ws" / "build.md"
    stamp = target.stat().st_mtime_ns
    again = tool.run({"command": "write", "path": path, "content": "make test"})
    assert again["ok"] and again["unchanged"] is True
    assert target.stat().st_mtime_ns == stamp
    changed = tool.run({"command": "write", "path": path, "content": "make check"})
    assert changed["ok"] and "unchanged" not in changed
    assert target.read_text() == "make check"


def test_notes_are_a_ninth_entry_in_token_budget_mode() -> None:
    notes = Memory(NOTES_NAME, "keep: build uses make", mtime_ns=-1)  # oldest of all
    on = select_memory([*mems(10), notes], token_budget_mode=True, count=words)
    assert len(on) == 9
    assert NOTES_NAME in on[-1]
    assert "build uses make" in on[-1]
    off = select_memory([*mems(10), notes], token_budget_mode=False, count=words)
    assert len(off) == 8
    assert all(NOTES_NAME not in e for e in off)


def test_notes_selected_normally_are_not_duplicated() -> None:
    notes = Memory(NOTES_NAME, "fresh notes", mtime_ns=100)
    entries = select_memory([*mems(3), notes], token_budget_mode=True, count=words)
    assert sum(NOTES_NAME in e for e in entries) == 1
    assert len(entries) == 4


def test_notes_entry_has_its_own_allowance() -> None:
    big = Memory(NOTES_NAME, "word " * 5000, mtime_ns=-1)
    entries = select_memory([*mems(8), big], token_budget_mode=True, count=words)
    notes_entry = entries[-1]
    assert len(notes_entry.encode()) <= 8 * 1024
    assert words(notes_entry) <= 2000
    assert "[... truncated]" in notes_entry
    # the normal eight keep their full text
    assert all("memory" in e for e in entries[:8])


def test_memory_tool_writes_reads_and_refuses_escapes(tmp_path: Path) -> None:
    layout = Layout(tmp_path, "ws")
    tool = MemoryTool(layout)
    path = f"/memories/workspace/{NOTES_NAME}"
    assert tool.run({"command": "write", "path": path, "content": "a"})["ok"]
    assert tool.run({"command": "append", "path": path, "content": "b"})["ok"]
    assert tool.run({"command": "view", "path": path})["content"] == "ab"
    assert layout.notes.read_text() == "ab"
    assert [m.name for m in load_memories(layout)] == [NOTES_NAME]
    for bad in ["/memories/workspace/../x.md", "/etc/passwd", "/memories/workspace/.x.md", 5]:
        result = tool.run({"command": "write", "path": bad, "content": "x"})
        assert result["ok"] is False
        assert result["error"]["code"] == "invalid_argument"
    too_big = tool.run({"command": "write", "path": path, "content": "x" * (8 * 1024 + 1)})
    assert too_big["error"]["code"] == "too_large"
    assert layout.notes.read_text() == "ab"  # nothing lost
