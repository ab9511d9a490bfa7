"""A window's memory context is read once and kept (the prompt cache reads it back): memory
written during a window reaches the next window, never the open one's system text, and a
rollover's new window keeps the memory its admission prepared and sent (R15, R21)."""

from __future__ import annotations

import os
from pathlib import Path

from segue._memory.pinned import Pin, memory_for
from tests.session.helpers import echo, harness

WINDOW = 8000
NOTES = "/memories/workspace/context-notes.md"


def write(path: str, content: str) -> dict[str, object]:
    return {"name": "memory", "input": {"command": "write", "path": path,
                                        "content": content}}


def test_memory_written_in_a_window_waits_for_the_next_and_the_rollover_keeps_its_own(
        tmp_path: Path) -> None:
    h = harness(
        tmp_path,
        [
            {"toolCalls": [echo("alpha", 1400)]},
            {"toolCalls": [echo("beta", 1100)]},
            {"toolCalls": [write(NOTES, "NOTE: parser done")]},
            {"toolCalls": [echo("gamma", 300)]},
            {"toolCalls": [echo("delta", 1400)]},  # rolls over
            {"toolCalls": [write("/memories/workspace/later.md", "LATER: tests pass")]},
            {"text": "continuing"},
            {"text": "second turn"},
        ],
        context_window=WINDOW,
    )
    session = h.session(threshold=50)
    first = session.send("work")
    assert first.status == "completed" and first.rollovers == 1
    assert session.send("and now?").status == "completed"
    requests = h.requests()
    windows = [r.rows[0].id for r in requests]
    old = [r for r, w in zip(requests, windows, strict=True) if w == windows[0]]
    new = [r for r, w in zip(requests, windows, strict=True) if w != windows[0]]
    assert len(old) >= 3 and len(new) >= 3 and len(old) + len(new) == 8
    # The notes were written in the old window (its last request shows the call) ...
    assert "NOTE: parser done" in str([r.text for r in old[-1].rows] + [
        p.input for r in old[-1].rows for p in r.parts if p.input])
    # One system text per window, byte for byte, whatever memory did meanwhile.
    assert len({r.system for r in old}) == 1
    assert len({r.system for r in new}) == 1
    assert "NOTE: parser done" not in old[0].system
    assert "NOTE: parser done" in new[0].system  # the candidate the rollover sent ...
    assert "LATER: tests pass" not in new[-1].system  # ... kept through the new window


def test_the_pin_rules() -> None:
    def fresh() -> list[str]:
        return ["fresh"]

    assert memory_for(None, "w:0", fresh) == (["fresh"], Pin("w:0", ("fresh",)))
    own = Pin("w:0", ("old",))
    assert memory_for(own, "w:0", fresh) == (["old"], None)  # nothing to write
    # A rollover admission prepares a candidate beside the open window's pin.
    assert memory_for(own, None, fresh) == (["fresh"], Pin("w:0", ("old",), ("fresh",)))
    waiting = Pin("w:0", ("old",), ("cand",))
    # The rollover's window adopts it; a failed admission (same window asks) drops it.
    assert memory_for(waiting, "w:7", fresh) == (["cand"], Pin("w:7", ("cand",)))
    assert memory_for(waiting, "w:0", fresh) == (["old"], Pin("w:0", ("old",)))
    # Another window without a candidate (a compaction's) reads memory afresh.
    assert memory_for(own, "w:9", fresh) == (["fresh"], Pin("w:9", ("fresh",)))


def test_the_pin_is_a_cache_that_never_creates_a_session_directory(tmp_path: Path) -> None:
    """Building a request (the chat's meter does it before anything was sent) writes no
    memory-context.json into a workspace nothing was written to, and none beside a Xum stream
    in progress; a session that has a transcript gets its pin."""
    h = harness(tmp_path, [{"text": "hello"}])
    session = h.session()
    session.build_system()
    assert not h.layout.session_dir.exists()
    assert session.send("hi").status == "completed"
    pin = h.layout.session_dir / "memory-context.json"
    session.build_system()
    assert pin.exists()
    pin.unlink()
    partial = h.layout.session_dir / "partial.json"
    partial.write_text("{}")
    os.utime(partial, ns=(h.layout.chat.stat().st_mtime_ns + 10**9,) * 2)
    session.build_system()
    assert not pin.exists()
