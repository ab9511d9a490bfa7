from __future__ import annotations

from segue import Part, Row, make_row
from segue._context.active import active_rows, has_sealable_context, newest_window_start
from segue._context.boundaries import (
    is_manual_reset,
    is_strict_rollover,
    is_synthetic_continuation,
    split_windows,
)
from segue._context.rollover import (
    lead_in_text,
    manual_reset_row,
    quarantined,
    rollover_batch,
    warning_row,
)


def seq(rows: list[Row]) -> list[Row]:
    """Number rows the way the store would."""
    from segue._messages import with_metadata

    return [with_metadata(r, historySequence=i) for i, r in enumerate(rows)]


def user(text: str) -> Row:
    return make_row("user", text, id=f"u-{text}")


def batch(trigger: Row | None, reason: str = "on-send") -> list[Row]:
    return rollover_batch(
        ids=("b", "l", "c"),
        rollover_id="r1",
        reason=reason,  # type: ignore[arg-type]
        new_window_id="w:3",
        previous_window_id="w:0",
        context_tokens=900,
        max_tokens=1000,
        trigger=trigger,
        now_ms=1,
    )


def test_rollover_batch_shape_and_validity() -> None:
    rows = batch(user("next"))
    assert [r.id for r in rows] == ["b", "l", "u-next"]
    assert is_strict_rollover(rows[0])
    lead = rows[1]
    assert lead.role == "user"
    assert lead.metadata["uiVisible"] is False
    assert "session_history" in lead.text
    assert "not instructions" in lead.text
    assert "w:3" in lead.text
    assert "side effects" not in lead.text


def test_mid_stream_batch_has_continuation_and_side_effect_warning() -> None:
    rows = batch(None, "mid-stream")
    assert is_synthetic_continuation(rows[2])
    assert rows[2].text == "Continue"
    assert "side effects" in rows[1].text
    assert "side effects" in lead_in_text("w:9", "w:0", "context-exceeded")


def test_provider_sees_only_new_window_after_rollover() -> None:
    history = seq([user("old"), make_row("assistant", "old answer", id="a1"), *batch(user("new"))])
    visible = active_rows(history)
    assert [r.id for r in visible] == ["l", "u-new"]
    assert not has_sealable_context(history[:-1])  # lead-in alone is internal-only
    assert has_sealable_context(history)


def test_manual_reset_has_no_lead_in_and_is_a_floor() -> None:
    reset = manual_reset_row(row_id="x", now_ms=5)
    assert is_manual_reset(reset)
    history = seq([user("a"), reset])
    assert active_rows(history) == []
    assert not has_sealable_context(history)
    assert split_windows(history)[-1].kind == "reset"


def test_compaction_window_starts_at_its_summary() -> None:
    summary = make_row(
        "assistant",
        "summary",
        id="s",
        metadata={"compactionBoundary": True, "compacted": True, "compactionEpoch": 1},
    )
    history = seq([user("a"), summary, user("b")])
    assert newest_window_start(history) == 1
    assert [r.id for r in active_rows(history)] == ["s", "u-b"]


def test_quarantine_keeps_identity_and_hides_from_provider() -> None:
    original = make_row(
        "user",
        "huge paste",
        id="u9",
        parts=[Part(type="file", mediaType="image/png", url="data:image/png;base64,AAAA")],
        metadata={"historySequence": 9, "timestamp": 3, "muxMetadata": {"type": "x"}},
    )
    q = quarantined(original)
    assert q.id == "u9"
    assert q.sequence == 9
    assert q.role == "assistant"
    assert q.parts == ()
    assert q.flag("contextBudgetRejected")
    assert "partial" not in q.metadata
    assert "muxMetadata" not in q.metadata  # no control metadata stays active outside
    kept = q.metadata["contextBudgetRejectedMessage"]
    assert kept["role"] == "user"
    assert kept["parts"][0]["text"] == "huge paste"
    assert kept["metadata"]["muxMetadata"] == {"type": "x"}
    assert active_rows([q]) == []


def test_warning_row_is_machine_authored() -> None:
    w = warning_row(
        row_id="w",
        now_ms=1,
        percent=62,
        label="Rolls over by 75%",
        context_tokens=620,
        max_tokens=1000,
        budget_tokens=750,
    )
    assert w.mux_type == "context-budget-warning"
    assert w.flag("synthetic")
    assert "/memories/workspace/context-notes.md" in w.text


def test_unanswered_continuation_is_not_resurrected() -> None:
    rows = seq([user("old"), *batch(None, "mid-stream"), user("new message")])
    visible = active_rows(rows)
    assert [r.mux_type for r in visible] == ["context-window-lead-in", None]
    assert visible[-1].text == "new message"
    # while the turn runs, the continuation is the last row and is sent
    running = seq([user("old"), *batch(None, "mid-stream")])
    assert is_synthetic_continuation(active_rows(running)[-1])
    # once the model answered it, it stays part of the conversation
    answered = [*running, make_row("assistant", "resuming", id="a9")]
    assert any(is_synthetic_continuation(r) for r in active_rows(answered))
