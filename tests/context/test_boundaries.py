from __future__ import annotations

from typing import Any

import pytest

from segue import Row, encode_row, make_row
from segue._context.boundaries import (
    ROOT_WINDOW_ID,
    boundary_kind,
    is_compaction_boundary,
    is_manual_reset,
    is_strict_rollover,
    item_id,
    newest_floor_index,
    split_windows,
)
from segue._context.floor import mentions_reset_key
from segue._messages import text_part


def rollover(seq: int, **overrides: Any) -> Row:
    mux: dict[str, Any] = {
        "type": "context-window-rollover",
        "rolloverId": "r1",
        "reason": "on-send",
        "previousWindowId": "w:0",
        "flushOpportunity": False,
        "contextTokens": 900,
        "maxTokens": 1000,
    }
    meta: dict[str, Any] = {
        "historySequence": seq,
        "contextBoundaryKind": "reset",
        "rolloverId": "r1",
        "muxMetadata": mux,
    }
    for key, value in overrides.items():
        if key.startswith("mux_"):
            mux[key[4:]] = value
        else:
            meta[key] = value
    return make_row("assistant", id=f"b{seq}", metadata=meta)


def manual(seq: int) -> Row:
    return make_row(
        "assistant", id=f"c{seq}", metadata={"historySequence": seq, "contextBoundaryKind": "reset"}
    )


def msg(seq: int, role: Any = "user") -> Row:
    return make_row(role, f"text {seq}", id=f"m{seq}", metadata={"historySequence": seq})


def test_valid_rollover_validates() -> None:
    row = rollover(3)
    assert is_strict_rollover(row)
    assert not is_manual_reset(row)
    assert boundary_kind(row) == "rollover"


def test_fields_only_at_metadata_level_are_a_manual_reset() -> None:
    # Xum validates the fields inside muxMetadata; a row that has them elsewhere is a floor.
    row = make_row(
        "assistant",
        id="b",
        metadata={
            "contextBoundaryKind": "reset",
            "muxMetadata": {"type": "context-window-rollover"},
            "rolloverId": "x",
            "reason": "mid-stream",
            "previousWindowId": "w:m:abc",
            "flushOpportunity": True,
            "contextTokens": 0,
            "maxTokens": 8,
        },
    )
    assert not is_strict_rollover(row)
    assert is_manual_reset(row)


def test_mirrored_rollover_id_is_read_from_mux_metadata() -> None:
    assert is_strict_rollover(rollover(2, rolloverId="other"))
    assert is_strict_rollover(rollover(2, mux_requestedBy="model", mux_flushOpportunity=True))


@pytest.mark.parametrize(
    "overrides",
    [
        {"mux_type": "context-window-lead-in"},
        {"mux_rolloverId": ""},
        {"mux_rolloverId": 7},
        {"mux_flushOpportunity": None},
        {"mux_flushOpportunity": "yes"},
        {"mux_flushOpportunity": 0},
        {"mux_requestedBy": "user"},
        {"mux_reason": "because"},
        {"mux_previousWindowId": "window-1"},
        {"mux_previousWindowId": None},
        {"mux_contextTokens": -1},
        {"mux_contextTokens": "900"},
        {"mux_contextTokens": True},
        {"mux_maxTokens": 0},
        {"mux_maxTokens": 1.5},
        {"partial": True},
        {"partial": "no"},
        {"contextBudgetRejected": True},
        {"compactionBoundary": True},
        {"muxMetadata": "rollover"},
    ],
)
def test_damaged_rollover_counts_as_manual_reset(overrides: dict[str, Any]) -> None:
    row = rollover(5, **overrides)
    assert not is_strict_rollover(row)
    assert is_manual_reset(row)
    assert boundary_kind(row) == "reset"


def test_wrong_role_or_parts_is_manual() -> None:
    base = rollover(1)
    assert is_manual_reset(Row(id="u", role="user", metadata=base.metadata))
    assert is_manual_reset(
        Row(id="p", role="assistant", parts=(text_part("x"),), metadata=base.metadata)
    )


def test_item_ids() -> None:
    assert item_id(msg(4)) == "4"
    assert item_id(make_row("user", "x", id="abc")) == "m:abc"


def test_split_windows_kinds_and_membership() -> None:
    compaction = make_row(
        "assistant",
        "summary",
        id="s",
        metadata={
            "historySequence": 6, "compactionBoundary": True, "compacted": True,
            "compactionEpoch": 1,
        },
    )
    assert is_compaction_boundary(compaction)
    rows = [msg(0), msg(1, "assistant"), rollover(2), msg(3), manual(4), msg(5), compaction, msg(7)]
    windows = split_windows(rows)
    assert [(w.window_id, w.kind) for w in windows] == [
        (ROOT_WINDOW_ID, "root"),
        ("w:2", "rollover"),
        ("w:4", "reset"),
        ("w:6", "compaction"),
    ]
    assert [r.id for r in windows[0].rows] == ["m0", "m1"]
    assert [r.id for r in windows[1].rows] == ["m3"]
    assert [r.id for r in windows[3].rows] == ["s", "m7"]
    assert newest_floor_index(rows) == 4
    assert newest_floor_index([msg(0), rollover(1)]) is None


def test_empty_history_has_root_window() -> None:
    assert [w.window_id for w in split_windows([])] == [ROOT_WINDOW_ID]


def test_raw_check_fails_closed() -> None:
    assert mentions_reset_key(encode_row(rollover(1)) + b"garbage")
    assert not mentions_reset_key(encode_row(msg(1)))


@pytest.mark.parametrize(
    ("compacted", "epoch", "valid"),
    [
        (True, 1, True),
        ("user", 3, True),
        ("idle", 1, True),
        ("heartbeat", 2, True),
        (None, 1, False),
        (1, 1, False),
        ("manual", 1, False),
        (False, 1, False),
        (True, 0, False),
        (True, None, False),
        (True, "1", False),
        (True, True, False),
    ],
)
def test_compaction_boundary_needs_xums_compacted_and_epoch(
    compacted: Any, epoch: Any, valid: bool
) -> None:
    meta: dict[str, Any] = {"historySequence": 1, "compactionBoundary": True}
    if compacted is not None:
        meta["compacted"] = compacted
    if epoch is not None:
        meta["compactionEpoch"] = epoch
    row = make_row("assistant", "summary", id="s", metadata=meta)
    assert is_compaction_boundary(row) is valid
    kinds = [w.kind for w in split_windows([msg(0), row])]
    assert kinds == (["root", "compaction"] if valid else ["root"])
