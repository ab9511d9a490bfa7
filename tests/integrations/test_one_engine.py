"""segue's own turns and the framework edges share one window engine: the same R37 call,
the same full window, through ``Session`` and through the framework ``WindowEngine``, write
rows of the same shape and answer in the same words."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from segue._errors import TurnPaused
from segue._messages import Row, make_row
from segue.integrations._engine import WindowEngine, tool_schemas
from tests.session.helpers import ENGINE_TOOLS, echo, harness

WINDOW = 8000  # reserve 2000, hard ceiling 6000
TOOLS = (*ENGINE_TOOLS, "new_context")
R13_REFUSAL = "may not use session_history, so a fresh window would lose access to earlier work"


def boundary(rows: list[Row]) -> Row:
    (found,) = [r for r in rows if r.metadata.get("contextBoundaryKind") is not None]
    return found


def shape(rows: list[Row]) -> dict[str, Any]:
    """A rollover as both drivers must write it: the boundary's §3 metadata without its
    ids and counts, and the rows that open the new window (role, synthetic, §3 type)."""
    b = boundary(rows)
    mux = {k: v for k, v in b.metadata["muxMetadata"].items()
           if k not in ("rolloverId", "contextTokens", "maxTokens")}
    at = rows.index(b)
    opened = [(r.role, r.flag("synthetic"), r.mux_type) for r in rows[at + 1 : at + 3]]
    return {"kind": b.metadata["contextBoundaryKind"], "mux": mux, "opened": opened}


def framework(home: Path) -> WindowEngine:
    return WindowEngine(
        "fw", model="openai-compatible:m", context_window=WINDOW, encoding="o200k_base",
        home=home,
    )


def answered_new_context(rows: list[Row]) -> Any:
    (part,) = [p for r in rows for p in r.parts if p.toolName == "new_context"]
    return part.output


def test_a_model_rollover_has_one_shape_in_both_drivers(tmp_path: Path) -> None:
    h = harness(
        tmp_path,
        [
            {"toolCalls": [echo("alpha", 50)]},
            {"toolCalls": [{"name": "new_context", "input": {"reason": "part one done"}}]},
            {"text": "fresh"},
        ],
        context_window=WINDOW,
    )
    result = h.session(builtin=TOOLS).send("do the first part")
    assert result.rollovers == 1
    own = h.rows()

    engine = framework(tmp_path / "fw-home")
    engine.send(make_row("user", "do the first part", id="u1"), system="s",
                tools=tool_schemas(["session_history", "new_context"]), may_use_history=True)
    engine.store.append([make_row("assistant", "working on it", id="a1")])
    answer = engine.new_context("part one done", system="s",
                                tools=tool_schemas(["session_history", "new_context"]),
                                may_use_history=True)
    theirs = list(engine.store.rows())

    assert shape(own)["mux"]["requestedBy"] == "model"
    assert shape(own) == shape(theirs)
    assert answered_new_context(own) == {"ok": True, "windowId": result.window_id}
    assert answer == {"ok": True, "windowId": engine.window_id()}
    assert engine.window_id() != "w:0"


def test_both_drivers_refuse_new_context_without_session_history(tmp_path: Path) -> None:
    h = harness(
        tmp_path,
        [{"toolCalls": [echo("alpha", 50)]},
         {"toolCalls": [{"name": "new_context", "input": {"reason": "done"}}]},
         {"text": "ok"}],
        context_window=WINDOW,
    )
    h.agent_file("narrow", "---\nbase: exec\ntools:\n  remove: [session_history]\n---\n")
    assert h.session(agent="narrow", builtin=TOOLS).send("go").rollovers == 0
    own = answered_new_context(h.rows())

    engine = framework(tmp_path / "fw-home")
    engine.store.append([make_row("user", "go", id="u1"), make_row("assistant", "ok", id="a1")])
    theirs = engine.new_context("done", system="s", tools=[], may_use_history=False)

    for answer in (own, theirs):
        assert answer["ok"] is False and answer["error"]["code"] == "not_allowed"
        assert R13_REFUSAL in answer["error"]["message"]
    assert own["error"]["message"].split(" may not ")[1] == (
        theirs["error"]["message"].split(" may not ")[1]
    )
    assert engine.window_id() == "w:0"


@pytest.mark.parametrize("reason", ["", "   "])
def test_both_drivers_reject_an_empty_reason_alike(tmp_path: Path, reason: str) -> None:
    h = harness(
        tmp_path,
        [{"toolCalls": [{"name": "new_context", "input": {"reason": reason}}]}, {"text": "ok"}],
        context_window=WINDOW,
    )
    h.session(builtin=TOOLS).send("go")
    own = answered_new_context(h.rows())
    engine = framework(tmp_path / "fw-home")
    theirs = engine.new_context(reason, system="s", tools=[], may_use_history=True)
    assert own["error"]["code"] == "invalid_argument"
    assert own == theirs


def test_a_full_window_at_send_rolls_over_alike_and_a_blocked_one_stops_alike(
    tmp_path: Path,
) -> None:
    # Two of these pass the trigger of an 8000-token window (6000 at threshold 70); one fits.
    big = "word " * 2600
    h = harness(tmp_path, [{"text": "noted"}, {"text": "fresh"}], context_window=WINDOW)
    session = h.session()
    assert session.send(big).rollovers == 0
    assert session.send("next " + big).rollovers == 1
    own = h.rows()

    engine = framework(tmp_path / "fw-home")
    # No system text or tool schemas of segue's own here: the framework's window fills with
    # one more message of the same size.
    engine.store.append([make_row("user", big, id="u0"), make_row("assistant", "noted", id="a0"),
                         make_row("user", big, id="u1"), make_row("assistant", "noted", id="a1")])
    stored = engine.send(make_row("user", "next " + big, id="u2"), system="s", tools=[],
                         may_use_history=True)
    theirs = list(engine.store.rows())
    assert shape(own) == shape(theirs)
    assert shape(own)["mux"]["reason"] == "on-send"
    assert stored[-1].id == "u2"

    # Without session_history a rollover would lose earlier work (R13): both stop the turn
    # with the same reason, before the message is stored.
    blocked = framework(tmp_path / "fw-home-2")
    blocked.store.append([make_row("user", big, id="u0"), make_row("assistant", "ok", id="a0"),
                          make_row("user", big, id="u1"), make_row("assistant", "ok", id="a1")])
    with pytest.raises(TurnPaused) as theirs_paused:
        blocked.send(make_row("user", "next " + big, id="u2"), system="s", tools=[],
                     may_use_history=False)
    (tmp_path / "two").mkdir()
    h2 = harness(tmp_path / "two", [{"text": "noted"}] * 3, context_window=WINDOW)
    h2.agent_file("narrow", "---\nbase: exec\ntools:\n  remove: [session_history]\n---\n")
    narrow = h2.session(agent="narrow")
    results = [narrow.send("next " + big) for _ in range(3)]  # the narrower tools fit more
    paused = [r for r in results if r.status == "paused"]
    assert paused, results
    assert paused[0].reason == theirs_paused.value.message
    assert "(the message was not sent)" in theirs_paused.value.message
    assert [r.id for r in list(blocked.store.rows())] == ["u0", "a0", "u1", "a1"]


def test_a_framework_window_near_the_threshold_gets_no_notes_warning(tmp_path: Path) -> None:
    """R14's warning asks the agent to write notes with segue's memory tool, which a
    framework agent does not have: between the warning point (65% at threshold 70) and the
    trigger (75%) the framework's window goes on unwarned and unrolled."""
    engine = framework(tmp_path / "fw-home")
    big = "word " * 2600
    engine.store.append([make_row("user", big, id="u0"), make_row("assistant", "ok", id="a0"),
                         make_row("user", big, id="u1"),
                         make_row("assistant", "word " * 300, id="a1")])
    projected = engine.count("s", engine.active(), [])
    assert engine.budget.warning_tokens is not None and engine.budget.trigger_tokens is not None
    assert engine.budget.warning_tokens <= projected < engine.budget.trigger_tokens
    before = [r.id for r in engine.store.rows()]
    shown = engine.settle(system="s", tools=[], may_use_history=True)
    assert [r.id for r in shown] == before == [r.id for r in engine.store.rows()]
