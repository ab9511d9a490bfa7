"""R33: a rollover committed by one send stops another in-flight send of the same workspace
from sending a request prepared against the old window; the rollover's own send adopts the
new epoch and goes on."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from segue import HistoryStore, Layout, Session, TurnResult, make_row
from segue._errors import StaleWindow
from segue._session.epochs import WindowEpochs
from segue._tools.base import FunctionTool
from tests.front import is_rollover_boundary
from tests.session.helpers import Harness, echo, harness

WINDOW = 8000


def test_a_lease_goes_stale_when_another_advances_and_the_advancer_adopts(
    tmp_path: Path,
) -> None:
    epochs = WindowEpochs()
    here, there = Layout(tmp_path, "ws"), Layout(tmp_path, "other")
    mine, theirs, elsewhere = epochs.lease(here), epochs.lease(here), epochs.lease(there)
    theirs.advance()
    assert theirs.current and not mine.current and elsewhere.current
    with pytest.raises(StaleWindow, match="another send rolled the context window over"):
        mine.check("before a provider step")
    theirs.check("before a provider step")
    assert epochs.lease(here).current  # a new send starts from the new epoch


def twin(h: Harness, tmp: Path, responses: list[Mapping[str, Any]]) -> Harness:
    """A second harness (own script and requestLog) over the same workspace as ``h``."""
    other = harness(tmp, responses, context_window=WINDOW)
    other.layout = h.layout
    other.store = HistoryStore(h.layout, durable=False)
    return other


def test_a_rollover_in_another_send_stops_the_stale_one(tmp_path: Path) -> None:
    # A: a send in flight in the full window (automatic handling off, so it never rolls over
    # itself); its tool runs B's send, which rolls the same workspace over meanwhile.
    (tmp_path / "a").mkdir()
    a = harness(
        tmp_path / "a",
        [{"toolCalls": [{"name": "interleave", "input": {}}]}, {"text": "next send of A"}],
        context_window=WINDOW,
    )
    a.store.append(
        [
            make_row("user", " ".join(["old"] * 2000), id="p0"),
            make_row("assistant", " ".join(["reply"] * 2000), id="p1"),
        ]
    )
    (tmp_path / "b").mkdir()
    b = twin(a, tmp_path / "b", [{"toolCalls": [echo("b", 1)]}, {"text": "B is done"}])
    session_b = b.session(threshold=50)
    b_results: list[TurnResult] = []

    def interleave(_args: Mapping[str, Any]) -> Any:
        b_results.append(session_b.send("the new question"))
        return {"ok": True}

    session_a: Session = a.session(threshold=100)
    session_a.tools.add(
        FunctionTool(
            name="interleave",
            description="Let another send run.",
            input_schema={"type": "object", "properties": {}},
            fn=interleave,
        )
    )

    result = session_a.send("work in the old window")

    # B rolled over and, having adopted the new epoch, made its second provider call.
    (b_result,) = b_results
    assert b_result.status == "completed" and b_result.rollovers == 1
    assert len(b.requests()) == 2
    # A's request after its tool step was assembled from the old window: never sent.
    assert result.status == "paused"
    assert result.reason is not None and "another send rolled" in result.reason
    assert len(a.requests()) == 1
    assert sum(is_rollover_boundary(r) for r in a.rows()) == 1

    # A's next send starts from the new window.
    follow = session_a.send("and now?")
    assert follow.status == "completed"
    last = a.requests()[-1]
    assert last.rows[0].mux_type == "context-window-lead-in"
    assert "old old" not in json.dumps([r.text for r in last.rows])
