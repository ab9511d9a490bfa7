"""The core store protocol behaves alike on the JSONL files, in memory and in PostgreSQL:
what a batch append returns and what reads give back, oldest and newest first, strictly
increasing sequences that a hard clear never reuses, quarantine, a hard clear, and the
privacy floor as ``open_history`` applies it. Each case runs once per kind of store; the
differential cases run one scenario on all three and compare the (non-empty) answers."""

from __future__ import annotations

from typing import Any

import pytest

import segue
from tests.store_contract.conftest import Stores, same_everywhere


def _user(n: int, text: str | None = None) -> segue.Row:
    return segue.make_row("user", text or f"question {n}", id=f"u{n}",
                          metadata={"timestamp": 1_700_000_000_000 + n})


def _answer(n: int) -> segue.Row:
    return segue.make_row("assistant", f"answer {n}", id=f"a{n}",
                          metadata={"timestamp": 1_700_000_000_500 + n})


def _floor(name: str) -> segue.Row:
    """What ``/clear --soft`` writes: a reset boundary, the privacy floor (R10, R11)."""
    return segue.make_row("assistant", id=name, metadata={
        "timestamp": 1_700_000_001_000, "contextBoundaryKind": "reset", "uiVisible": False})


def _compaction(name: str) -> segue.Row:
    return segue.make_row("assistant", "summary so far", id=name, metadata={
        "compactionBoundary": True, "compacted": True, "compactionEpoch": 1})


def test_every_store_is_a_maintained_store(stores: Stores) -> None:
    store = stores.open()
    assert isinstance(store, segue.TranscriptStore)
    assert isinstance(store, segue.MaintainedStore)


def test_append_returns_the_stored_rows_and_reads_give_them_back_in_order(
    stores: Stores,
) -> None:
    store = stores.open()
    given = _user(0, "hello")
    first = store.append([given, _answer(0)])
    assert [(r.id, r.role, r.text) for r in first] == [
        ("u0", "user", "hello"), ("a0", "assistant", "answer 0")]
    assert all(r.workspaceId == "ws" for r in first)
    store.append([_user(1), _answer(1)])
    again = stores.open()  # a second opening reads the same transcript
    assert [r.id for r in again.rows()] == ["u0", "a0", "u1", "a1"]
    assert [e.row.id for e in again.entries() if e.row] == ["u0", "a0", "u1", "a1"]
    assert [e.row.id for e in again.entries_reverse() if e.row] == ["a1", "u1", "a0", "u0"]
    assert [r.text for r in again.rows()] == ["hello", "answer 0", "question 1", "answer 1"]
    assert store.append([]) == []


def test_sequences_strictly_increase_and_a_hard_clear_never_reuses_one(stores: Stores) -> None:
    store = stores.open()
    assert store.next_sequence() == 0
    claimed = segue.make_row("user", "claims 999", id="c", metadata={"historySequence": 999})
    seen: list[int] = []
    for n in range(4):
        batch = [claimed] if n == 0 else [_user(n), _answer(n)]
        seen += [r.sequence for r in stores.open().append(batch) if r.sequence is not None]
    assert seen == list(range(len(seen))) and len(seen) == 7  # the store assigns them
    assert [r.sequence for r in store.rows()] == seen
    assert store.next_sequence() == 7
    store.clear_all()
    assert list(store.rows()) == [] and list(store.entries_reverse()) == []
    assert store.next_sequence() >= 7
    after = store.append([_user(9)])
    assert after[0].sequence is not None and after[0].sequence >= 7
    assert [r.id for r in stores.open().rows()] == ["u9"]


def test_a_boundary_batch_keeps_every_row_readable(stores: Stores) -> None:
    store = stores.open()
    store.append([_user(0), _answer(0)])
    store.append([_user(1), _floor("r"), _user(2)])
    store.append([_compaction("s")])
    assert [r.id for r in store.rows()] == ["u0", "a0", "u1", "r", "u2", "s"]
    assert [e.row.id for e in store.entries_reverse() if e.row] == [
        "s", "u2", "r", "u1", "a0", "u0"]
    ends = [e.end for e in store.entries()]
    assert ends == sorted(ends) and len(set(ends)) == len(ends)  # one history, in order


def test_quarantine_keeps_id_and_sequence_and_refuses_a_boundary(stores: Stores) -> None:
    store = stores.open()
    store.append([_user(0), _user(1, "a huge attachment"), _answer(1)])
    kept = store.quarantine("1", send_failure="too large")  # items are named by sequence
    assert (kept.id, kept.sequence, kept.role, kept.parts) == ("u1", 1, "assistant", ())
    assert kept.metadata["contextBudgetRejected"] is True
    assert kept.metadata["contextBudgetRejectedMessage"]["parts"][0]["text"] == \
        "a huge attachment"
    reread = {r.id: r for r in stores.open().rows()}
    assert reread["u1"] == kept and reread["u0"].text == "question 0"
    assert [r.sequence for r in store.rows()] == [0, 1, 2]
    with pytest.raises(segue.SegueError) as missing:
        store.quarantine("nobody")
    assert missing.value.code == "item_not_found"
    (floor_row,) = store.append([_floor("r")])
    with pytest.raises(segue.SegueError) as floor:
        store.quarantine(str(floor_row.sequence))
    assert floor.value.code == "not_quarantinable"


def test_the_floor_hides_what_came_before_it_in_open_history(stores: Stores) -> None:
    store = stores.open()
    store.append([_user(0, "the old secret"), _answer(0)])
    store.append([_floor("clear-1")])
    store.append([_user(1, "after the floor"), _answer(1)])
    with stores.history() as history:
        windows = history.windows()
        items = [i.text for w in windows for i in history.items(w.window_id)]
        assert items == ["after the floor", "answer 1"]
        assert [w.kind for w in windows] == ["reset"]
        assert history.search("secret") == []
    with stores.history(include_cleared=True) as everything:
        assert [h.snippet for h in everything.search("secret")] == ["the old secret"]


def _transcript(stores: Stores) -> dict[str, Any]:
    """One scenario through the core protocol and open_history: what each read shows."""
    store = stores.open()
    store.append([_user(0, "alpha"), _answer(0)])
    store.append([_user(1, "beta"), _floor("clear-1"), _user(2, "gamma")])
    *_, last = store.append([_answer(2), _compaction("s"), _user(3, "delta")])
    store.quarantine(str(last.sequence))
    with stores.history() as history:
        shown = [(w.kind, [(i.role, i.text) for i in history.items(w.window_id)])
                 for w in history.windows()]
    return {
        "rows": [(r.id, r.role, r.sequence, r.text, r.workspaceId) for r in store.rows()],
        "entries": [(e.row.id if e.row else None, e.reset_marker, e.end, e.size)
                    for e in store.entries()],
        "reverse": [e.end for e in store.entries_reverse()],
        "next": store.next_sequence(),
        "history": shown,
    }


def test_one_scenario_reads_the_same_on_every_store(every_kind: dict[str, Stores]) -> None:
    answer = same_everywhere(every_kind, _transcript)
    assert isinstance(answer, dict)
    assert len(answer["rows"]) == 8 and answer["next"] == 8
    assert answer["reverse"] == [end for *_, end, _size in reversed(answer["entries"])]
    assert answer["history"] and all(items for _kind, items in answer["history"])


def test_the_owners_view_shows_a_row_past_the_tools_line_bound(stores: Stores) -> None:
    """``open_history`` is the owner's complete view (R24's 1 MiB line bound is the model
    tool's): a 1.5 MiB tool output reads back whole from every store."""
    huge = "build log line with a stack trace\\n" * 45_000
    assert len(huge.encode()) > 3 << 19
    store = stores.open()
    store.append([_user(0, "show me the log"), segue.make_row("assistant", huge, id="a0")])
    with stores.history() as history:
        (window,) = history.windows()
        assert [len(i.text) for i in history.items(window.window_id)] == [15, len(huge)]
    assert [e.size > len(huge) for e in store.entries()] == [False, True]
