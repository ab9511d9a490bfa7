"""Edited-file carryover, the pure part and its file: which window sees which list."""

from __future__ import annotations

import json
from pathlib import Path

from segue import HistoryStore, Layout
from segue._tools.carryover import (
    MAX_FILES,
    Anchor,
    Carried,
    Carryover,
    Edit,
    FileState,
    carried_into,
    from_obj,
    handed_off,
    record,
    render,
    to_hand_off,
    to_obj,
)
from segue._tools.carryover_file import CarryoverFile, carryover_path, file_state

ROOT = "/work"


def test_a_window_hands_off_its_own_edits_then_what_it_was_given() -> None:
    carry = Carryover((), Carried("b1", None, (FileState("old.py", "deleted"),)), ROOT)
    carry = record(carry, Edit("a.py", 5, 1), ROOT)
    carry = record(carry, Edit("b.py", 7, 2), ROOT)
    carry = record(carry, Edit("a.py", 9, 3), ROOT)  # edited again: newest first, listed once
    here = Anchor("b1", 4)
    assert carried_into(carry, here) == (FileState("old.py", "deleted"),)
    assert to_hand_off(carry, here) == ["a.py", "b.py", "old.py"]
    # Edits at or below a window's boundary belong to an earlier window (e.g. before a reset).
    assert to_hand_off(carry, Anchor("reset-1", 7)) == ["a.py"]
    assert carried_into(carry, Anchor("reset-1", 7)) == ()


def test_an_unpublished_handoff_is_adopted_back_by_the_window_it_came_from() -> None:
    files = (FileState("a.py", "present", 3, "abc", 1),)
    published = handed_off(Carryover(root=ROOT), Anchor("b1", 4), "b2", files)
    assert published.edits == ()
    assert carried_into(published, Anchor("b2", 10)) == files  # the append happened
    assert carried_into(published, Anchor("b1", 4)) == ()  # it did not: nothing shown ...
    assert to_hand_off(published, Anchor("b1", 4)) == ["a.py"]  # ... but nothing lost
    assert to_hand_off(published, Anchor("reset", 11)) == []  # anyone else: stale
    root = handed_off(Carryover(root=ROOT), Anchor(None, -1), "b2", files)
    assert to_hand_off(root, Anchor(None, -1)) == ["a.py"]


def test_the_list_is_bounded() -> None:
    carry = Carryover(root=ROOT)
    for n in range(MAX_FILES + 10):
        carry = record(carry, Edit(f"f{n}.py", n, n), ROOT)
    listed = to_hand_off(carry, Anchor(None, -1))
    assert len(listed) == MAX_FILES and listed[0] == f"f{MAX_FILES + 9}.py"


def test_json_round_trip_and_rendering() -> None:
    files = (
        FileState("src/a.py", "present", 120, "0123456789ab", 1_700_000_000_000),
        FileState("gone.txt", "deleted"),
    )
    carry = Carryover((Edit("x", 1, 2),), Carried("b", "a", files), ROOT)
    assert from_obj(json.loads(json.dumps(to_obj(carry)))) == carry
    text = render(files)
    assert text.startswith("# Files edited earlier in this session")
    assert "- src/a.py: 120 bytes, sha256 0123456789ab, modified 2023-11-14T22:13:20Z" in text
    assert "- gone.txt: deleted" in text
    assert render(()) == ""


def test_file_states_and_a_damaged_file(tmp_path: Path) -> None:
    root = tmp_path / "work"
    root.mkdir()
    (root / "a.txt").write_text("hello")
    state = file_state(root, "a.txt")
    assert (state.state, state.size, state.sha256) == ("present", 5, "2cf24dba5fb0")
    assert file_state(root, "missing").state == "deleted"
    assert file_state(root, "../etc/passwd").state == "not-a-file"
    layout = Layout(tmp_path / "home", "ws")
    carry = CarryoverFile(layout, HistoryStore(layout, durable=False), durable=False)
    carry.record_edit(root, "a.txt")
    assert [e.path for e in carry.load().edits] == ["a.txt"]
    carryover_path(layout).write_text("{not json")
    assert carry.load() == Carryover()
    assert carryover_path(layout).with_name("carryover.json.bad").read_text() == "{not json"
    carry.record_edit(root, "a.txt")
    carry.clear()
    assert not carryover_path(layout).exists()
