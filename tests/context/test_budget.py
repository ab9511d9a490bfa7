from __future__ import annotations

import pytest

from segue._context.budget import (
    Action,
    Budget,
    Situation,
    decide,
    output_reserve,
    projected_tokens,
    rollover_label,
)


def sit(projected: int, **kw: bool) -> Situation:
    base = {"experiment": True, "may_use_history": True, "window_has_context": True}
    base.update(kw)
    return Situation(projected=projected, **base)


def test_numbers_for_a_128k_window() -> None:
    b = Budget(128_000, 70)
    assert output_reserve(128_000) == 8192
    assert b.hard_ceiling == 119_808
    assert b.trigger_tokens == 96_000  # 75 %
    assert b.warning_tokens == 76_800  # 60 %


@pytest.mark.parametrize(
    ("projected", "action"),
    [
        (76_799, Action.CONTINUE),
        (76_800, Action.WARN),
        (95_999, Action.WARN),
        (96_000, Action.ROLLOVER),
        (96_001, Action.ROLLOVER),
        (1_000_000, Action.ROLLOVER),
    ],
)
def test_threshold_edges(projected: int, action: Action) -> None:
    assert decide(Budget(128_000, 70), sit(projected)).action is action


def test_warning_only_once_per_window_and_only_where_notes_writable() -> None:
    b = Budget(128_000, 70)
    assert decide(b, Situation(80_000, True, True, True, warned=True)).action is Action.CONTINUE
    assert (
        decide(b, Situation(80_000, True, True, True, notes_writable=False)).action
        is Action.CONTINUE
    )


def test_hard_ceiling_comes_first_for_small_windows() -> None:
    # limit 8000: reserve 2000, ceiling 6000; 95 % + 5 = 8000 > ceiling → ceiling wins
    b = Budget(8000, 95)
    assert b.trigger_tokens == 6000
    assert decide(b, sit(5999)).action is Action.CONTINUE
    assert decide(b, sit(6000)).action is Action.ROLLOVER


@pytest.mark.parametrize("projected", [0, 50_000, 119_808])
def test_threshold_100_is_off_but_fits(projected: int) -> None:
    b = Budget(128_000, 100)
    assert b.trigger_tokens is None and b.warning_tokens is None
    assert decide(b, sit(projected)).action is Action.CONTINUE


def test_threshold_100_pauses_past_the_ceiling() -> None:
    d = decide(Budget(128_000, 100), sit(119_809))
    assert d.action is Action.PAUSE
    assert d.reason is not None and "hard ceiling" in d.reason


def test_threshold_0_rolls_over_at_five_percent_and_never_warns() -> None:
    b = Budget(100_000, 0)
    assert b.trigger_tokens == 5000
    assert b.warning_tokens is None
    assert decide(b, sit(4999)).action is Action.CONTINUE
    assert decide(b, sit(5000)).action is Action.ROLLOVER


def test_million_token_window() -> None:
    b = Budget(1_000_000, 70)
    assert b.hard_ceiling == 1_000_000 - 8192
    assert decide(b, sit(749_999)).action is Action.WARN
    assert decide(b, sit(750_000)).action is Action.ROLLOVER


def test_tiny_window() -> None:
    b = Budget(8, 70)
    assert b.hard_ceiling == 6
    assert b.trigger_tokens == 6
    assert decide(b, sit(6)).action is Action.ROLLOVER


def test_experiment_off_compacts_and_never_warns() -> None:
    b = Budget(128_000, 70)
    assert decide(b, sit(96_000, experiment=False)).action is Action.COMPACT
    assert decide(b, sit(90_000, experiment=False)).action is Action.CONTINUE


def test_blocked_without_session_history() -> None:
    d = decide(Budget(128_000, 70), sit(96_000, may_use_history=False))
    assert d.action is Action.BLOCK
    assert d.reason is not None and "session_history" in d.reason


def test_empty_window_needs_no_history_access() -> None:
    d = decide(Budget(128_000, 70), sit(96_000, may_use_history=False, window_has_context=False))
    assert d.action is Action.CONTINUE


@pytest.mark.parametrize("bad", [-5, 3, 101, 72])
def test_bad_thresholds(bad: int) -> None:
    with pytest.raises(ValueError, match="steps of 5"):
        Budget(1000, bad)


def test_labels_and_percent() -> None:
    assert rollover_label(70) == "Rolls over by 75%"
    assert rollover_label(100) == "Automatic rollover off"
    assert Budget(1000).percent(1) == 1  # rounded up: an upper bound
    assert Budget(1000).percent(0) == 0


def test_projection_takes_the_larger() -> None:
    step = {"last_context": 100, "last_output": 20, "new_tool_results": 5}
    assert projected_tokens(**step, assembled_estimate=90) == 125
    assert projected_tokens(**step, assembled_estimate=200) == 200


def test_the_trigger_label_is_truthful() -> None:
    from segue._context.budget import Budget, trigger_label

    assert trigger_label(Budget(100_000, 70), experiment=False) == "compacts by 75%"
    assert trigger_label(Budget(100_000, 70), experiment=True) == "rolls over by 75%"
    # 10 000 tokens: the hard ceiling (limit - limit // 4 = 75%) comes before 90 + 5.
    assert trigger_label(Budget(10_000, 90), experiment=True) == "rolls over by 75%"
    assert trigger_label(Budget(10_000, 100), experiment=False) == "automatic compaction off"
