"""At most one emergency rollover per turn (R6, R17): a provider that rejects the request as
too large again, after the emergency rollover and a settled tool step in the new window,
pauses the turn instead of rolling over a second time."""

from __future__ import annotations

from pathlib import Path

from tests.front import is_rollover_boundary
from tests.session.helpers import echo, harness
from tests.session.test_turns import WINDOW, prime


def test_a_second_overflow_in_one_turn_pauses_instead_of_rolling_over_again(
    tmp_path: Path,
) -> None:
    h = harness(
        tmp_path,
        [
            {"error": {"kind": "context_overflow"}},
            {"toolCalls": [echo("looked", 10)]},  # an assistant row in the fresh window
            {"error": {"kind": "context_overflow"}},
            {"text": "never sent"},
        ],
        context_window=WINDOW,
    )
    prime([("user", "earlier work"), ("assistant", "done earlier")], h)
    result = h.session().send("please continue with X")
    assert result.status == "paused"
    assert result.rollovers == 1
    assert sum(is_rollover_boundary(r) for r in h.rows()) == 1
    assert len(h.requests()) == 3
