"""Engine behaviour found in review, pinned by tests: compaction usage is not the new
window's pressure (R3/R4), an empty window is never compacted (R1), and an overflow right
after a rollover pauses instead of rolling over again (R5/R6)."""

from __future__ import annotations

from pathlib import Path

from segue._context.assembly import last_step_usage
from segue._context.budget import Action, Budget, Situation, decide
from segue._messages import make_row
from tests.session.helpers import echo, harness

WINDOW = 32000  # threshold 30 → rolls over at 11200 (35 %), warns at 6400


def test_compaction_row_usage_is_not_the_new_windows_pressure() -> None:
    summary = make_row(
        "assistant",
        "[Summary of the conversation so far]\nshort",
        id="compaction-1",
        metadata={
            "compactionBoundary": True,
            "compacted": True,
            "compactionEpoch": 1,
            "usage": {"inputTokens": 9000, "outputTokens": 40},
        },
    )
    # The summary request measured the old window; the new window holds only the summary.
    assert last_step_usage([summary]) <= 40


def test_send_after_manual_compact_does_not_roll_over(tmp_path: Path) -> None:
    h = harness(
        tmp_path,
        [
            {"toolCalls": [echo("alpha", 3000), echo("gamma", 3000), echo("delta", 2500)]},
            {"text": "done"},
            {"text": "Summary: echoed three words."},
            {"text": "ok"},
        ],
        context_window=WINDOW,
    )
    session = h.session(threshold=30)
    assert session.send("start").status == "completed"
    session.compact()
    result = session.send(" ".join(["beta"] * 2600))
    requests = h.requests()
    # The request actually sent is far below the 11200-token trigger ...
    trigger = session.budget.trigger_tokens
    assert trigger is not None and session.count(requests[-1]) < trigger // 2
    # ... so nothing may roll over.
    assert result.status == "completed"
    assert result.rollovers == 0


def test_experiment_off_large_first_message_is_sent_not_compacted(tmp_path: Path) -> None:
    h = harness(tmp_path, [{"text": "read it"}], context_window=8000)
    session = h.session(experiment=False, threshold=50)
    result = session.send(" ".join(["word"] * 3800))
    assert result.status == "completed", result.reason
    assert [r.role for r in h.rows()] == ["user", "assistant"]


def test_decide_experiment_off_empty_window_continues() -> None:
    budget = Budget(8000, 50)
    situation = Situation(
        projected=5000, experiment=False, may_use_history=False, window_has_context=False
    )
    assert decide(budget, situation).action is Action.CONTINUE


def test_overflow_right_after_a_rollover_pauses_without_a_second_rollover(
    tmp_path: Path,
) -> None:
    h = harness(
        tmp_path,
        [
            {"toolCalls": [echo("alpha", 1400)]},
            {"toolCalls": [echo("beta", 1400)]},
            {"text": "done"},
            {"error": {"kind": "context_overflow"}},
            {"error": {"kind": "context_overflow"}},
        ],
        context_window=8000,
    )
    session = h.session(threshold=50)
    assert session.send("go").status == "completed"
    result = session.send(" ".join(["word"] * 3000))
    assert result.status == "paused"
    assert result.rollovers <= 1
