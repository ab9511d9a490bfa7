"""Rollover admission (R21): a candidate request that would not fit even the fresh window is
refused before any cleanup or append, and the current window stays open; one that fits is
admitted. The count is the caller's (the real encoding); the bound is the hard ceiling."""

from __future__ import annotations

import pytest

from segue import InMemoryStore
from segue._context.budget import Budget
from segue._errors import TurnPaused
from segue._session.admission import Cancellation, RolloverPlan, admit_rollover
from tests.retrieval.helpers import text_row

LIMIT = 8000  # hard ceiling: 8000 - min(8192, 8000 // 4) = 6000 (R3)


def _admit(store: InMemoryStore, tokens: int, cleaned: list[bool]) -> object:
    plan = RolloverPlan(
        reason="on-send", previous_window_id="w:0", context_tokens=5000, trigger=None,
        ids=("b", "l", "t"), rollover_id="r1", now_ms=1,
    )
    return admit_rollover(
        plan, store=store, budget=Budget(LIMIT), build_system=lambda: "system", tools=(),
        count=lambda _request: tokens, cleanup=lambda: cleaned.append(True),
        cancel=Cancellation(),
    )


def test_a_fresh_window_that_does_not_fit_is_refused_before_cleanup() -> None:
    store = InMemoryStore("ws")
    store.append([text_row("old work", None)])
    before = list(store.lines())
    cleaned: list[bool] = []
    with pytest.raises(TurnPaused, match="would not fit"):
        _admit(store, 6001, cleaned)
    assert cleaned == []
    assert list(store.lines()) == before


def test_a_fresh_window_that_fits_is_admitted() -> None:
    store = InMemoryStore("ws")
    store.append([text_row("old work", None)])
    cleaned: list[bool] = []
    _admit(store, 6000, cleaned)
    assert cleaned == [True]
    assert len(list(store.lines())) > 1
