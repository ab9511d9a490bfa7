"""R17: the provider's context-overflow error is a handled backstop, once per turn. A second
overflow in the same turn pauses it; it never rolls the fresh window over again."""

from __future__ import annotations

from pathlib import Path

from segue import make_row
from tests.front import is_rollover_boundary
from tests.session.helpers import harness

WINDOW = 8000


def test_a_second_provider_overflow_in_one_turn_pauses(tmp_path: Path) -> None:
    h = harness(
        tmp_path,
        [
            {"error": {"kind": "context_overflow"}},
            {"error": {"kind": "context_overflow"}},
            {"text": "never reached"},
        ],
        context_window=WINDOW,
    )
    h.store.append(
        [make_row("user", "earlier work", id="p0"), make_row("assistant", "done", id="p1")]
    )
    result = h.session().send("please continue with X")
    assert result.status == "paused"
    assert result.reason is not None and "too large" in result.reason
    assert result.rollovers == 1
    assert sum(is_rollover_boundary(r) for r in h.rows()) == 1
    assert len(h.requests()) == 2  # the first try and the one retry in the fresh window
