"""``new_context`` (SPEC.md R37, §4) through the turn loop: the model asks for a fresh window;
segue rolls over as R5 does, with ``requestedBy: "model"``, under tool policy (R12) and R13.
Real store, scripted provider, its requestLog; one run through ``segue run``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from segue import HistoryStore, Layout, RolledOver, Row, Warned
from segue._errors import TurnPaused
from tests.front import cli, is_rollover_boundary
from tests.scripted_cli import script
from tests.session.helpers import ENGINE_TOOLS, Harness, echo, harness

WINDOW = 8000  # reserve 2000, hard ceiling 6000; threshold 50 → warns at 3200
TOOLS = (*ENGINE_TOOLS, "new_context")


def new_context(reason: str = "the first part is done") -> dict[str, Any]:
    return {"name": "new_context", "input": {"reason": reason}}


def tool_output(row: Row, name: str) -> Any:
    (part,) = [p for p in row.parts if p.type == "dynamic-tool" and p.toolName == name]
    assert part.state == "output-available"
    return part.output


def boundaries(rows: list[Row]) -> list[Row]:
    return [r for r in rows if r.metadata.get("contextBoundaryKind") is not None]


def assert_model_rollover_rows(rows: list[Row], previous_window: str) -> str:
    """The §3 rollover shapes, field by field, with requestedBy "model"; returns the new
    window id (the boundary's sequence names it)."""
    (boundary,) = boundaries(rows)
    at = rows.index(boundary)
    lead_in, continuation = rows[at + 1], rows[at + 2]
    assert boundary.role == "assistant" and boundary.parts == ()
    rollover_id = boundary.metadata["muxMetadata"]["rolloverId"]
    assert set(boundary.metadata) == {
        "timestamp",
        "historySequence",
        "contextBoundaryKind",
        "rolloverId",
        "muxMetadata",
    }
    assert boundary.metadata["contextBoundaryKind"] == "reset"
    assert boundary.metadata["rolloverId"] == rollover_id
    mux = boundary.metadata["muxMetadata"]
    assert mux == {
        "type": "context-window-rollover",
        "rolloverId": rollover_id,
        "reason": "on-send",
        "previousWindowId": previous_window,
        "flushOpportunity": False,
        "contextTokens": mux["contextTokens"],
        "maxTokens": WINDOW,
        "requestedBy": "model",
    }
    assert isinstance(mux["contextTokens"], int) and mux["contextTokens"] > 0
    assert is_rollover_boundary(boundary)
    window_id = f"w:{boundary.sequence}"
    assert lead_in.role == "user" and len(lead_in.parts) == 1
    assert lead_in.metadata["synthetic"] is True and lead_in.metadata["uiVisible"] is False
    assert lead_in.metadata["muxMetadata"] == {
        "type": "context-window-lead-in",
        "rolloverId": rollover_id,
    }
    assert window_id in lead_in.text and "session_history" in lead_in.text
    assert continuation.text == "Continue" and continuation.metadata["synthetic"] is True
    return window_id


def test_model_call_rolls_over_and_answers_with_the_new_window(tmp_path: Path) -> None:
    h = harness(
        tmp_path,
        [
            {"toolCalls": [echo("alpha", 300)]},
            {"toolCalls": [new_context()]},
            {"text": "fresh start"},
        ],
        context_window=WINDOW,
    )
    result = h.session(builtin=TOOLS).send("do the first part")
    assert result.status == "completed" and result.rollovers == 1
    rows = h.rows()
    window_id = assert_model_rollover_rows(rows, previous_window="w:0")
    assert result.window_id == window_id
    # The step that made the call (the call and its result) opens the new window.
    call_row = next(r for r in rows if any(p.toolName == "new_context" for p in r.parts))
    assert rows.index(call_row) == rows.index(boundaries(rows)[0]) + 3
    assert tool_output(call_row, "new_context") == {"ok": True, "windowId": window_id}
    assert [e.reason for e in h.events if isinstance(e, RolledOver)] == ["on-send"]

    first, second, third = h.requests()
    assert "new_context" in [t["name"] for t in first.tools]
    assert "do the first part" in first.rows[0].text
    # The next provider request starts in the fresh window: nothing of the old one.
    assert third.rows[0].mux_type == "context-window-lead-in"
    assert window_id in third.rows[0].text
    assert not any("alpha" in json.dumps([p.output for p in r.parts]) for r in third.rows)
    # Only the lead-in names the request that owns the turn (R37's rollover is mid-turn).
    assert all("do the first part" not in r.text for r in third.rows[1:])
    assert "<request>\ndo the first part\n</request>" in third.rows[0].text
    assert tool_output(third.rows[-1], "new_context") == {"ok": True, "windowId": window_id}
    assert second.rows[0].text == "do the first part"


def test_no_rollover_when_the_agent_cannot_use_session_history(tmp_path: Path) -> None:
    h = harness(
        tmp_path,
        [{"toolCalls": [echo("alpha", 50)]}, {"toolCalls": [new_context()]}, {"text": "ok"}],
        context_window=WINDOW,
    )
    h.agent_file("narrow", "---\nbase: exec\ntools:\n  remove: [session_history]\n---\n")
    result = h.session(agent="narrow", builtin=TOOLS).send("go")
    assert result.status == "completed" and result.rollovers == 0
    rows = h.rows()
    assert boundaries(rows) == []
    output = tool_output(rows[-2], "new_context")
    assert output["ok"] is False and output["error"]["code"] == "not_allowed"
    assert "session_history" in output["error"]["message"]
    offered = [t["name"] for t in h.requests()[0].tools]
    assert "session_history" not in offered and "new_context" in offered


def test_no_rollover_when_policy_removes_new_context(tmp_path: Path) -> None:
    h = harness(
        tmp_path,
        [{"toolCalls": [echo("alpha", 50)]}, {"toolCalls": [new_context()]}, {"text": "ok"}],
        context_window=WINDOW,
    )
    h.agent_file("steady", "---\nbase: exec\ntools:\n  remove: [new_context]\n---\n")
    result = h.session(agent="steady", builtin=TOOLS).send("go")
    assert result.rollovers == 0 and boundaries(h.rows()) == []
    assert "new_context" not in [t["name"] for t in h.requests()[0].tools]
    output = tool_output(h.rows()[-2], "new_context")
    assert output["error"]["code"] == "not_allowed"


def test_explore_inherits_new_context_from_exec(tmp_path: Path) -> None:
    h = harness(
        tmp_path,
        [{"toolCalls": [echo("alpha", 50)]}, {"toolCalls": [new_context()]}, {"text": "ok"}],
        context_window=WINDOW,
    )
    result = h.session(agent="explore", builtin=TOOLS).send("look around")
    assert result.rollovers == 1
    assert_model_rollover_rows(h.rows(), previous_window="w:0")


def test_experiment_off_the_tool_is_not_advertised_and_a_call_is_refused(
    tmp_path: Path,
) -> None:
    h = harness(
        tmp_path,
        [{"toolCalls": [echo("alpha", 50)]}, {"toolCalls": [new_context()]}, {"text": "ok"}],
        context_window=WINDOW,
    )
    result = h.session(experiment=False, builtin=TOOLS).send("go")
    assert result.rollovers == 0 and boundaries(h.rows()) == []
    for request in h.requests():
        names = [t["name"] for t in request.tools]
        assert "new_context" not in names and "session_history" not in names
    output = tool_output(h.rows()[-2], "new_context")
    assert output["error"]["code"] == "not_allowed"
    assert "experiments.tokenBudget" in output["error"]["message"]


def test_an_empty_reason_is_an_invalid_argument(tmp_path: Path) -> None:
    h = harness(
        tmp_path,
        [{"toolCalls": [echo("alpha", 50)]}, {"toolCalls": [new_context("  ")]}, {"text": "ok"}],
        context_window=WINDOW,
    )
    assert h.session(builtin=TOOLS).send("go").rollovers == 0
    assert tool_output(h.rows()[-2], "new_context")["error"]["code"] == "invalid_argument"
    assert boundaries(h.rows()) == []


#: Two large tool steps: the second passes the warning point (45 %), not the rollover point.
WARNING_SCRIPT: list[dict[str, Any]] = [
    {"toolCalls": [echo("alpha", 1400)]},
    {"toolCalls": [echo("beta", 1400)]},
    {"text": "ok"},
]


def warning_text(h: Harness) -> str:
    (warned,) = [e for e in h.events if isinstance(e, Warned)]
    (row,) = [r for r in h.rows() if r.mux_type == "context-budget-warning"]
    assert row.text == warned.text
    text: str = row.text
    return text


def test_the_budget_warning_offers_new_context(tmp_path: Path) -> None:
    h = harness(tmp_path, WARNING_SCRIPT, context_window=WINDOW)
    h.session(threshold=50, builtin=TOOLS).send("go")
    assert "new_context" in warning_text(h)


def test_the_warning_does_not_offer_new_context_to_an_agent_that_cannot_use_it(
    tmp_path: Path,
) -> None:
    h = harness(tmp_path, WARNING_SCRIPT, context_window=WINDOW)
    h.agent_file("steady", "---\nbase: exec\ntools:\n  remove: [new_context]\n---\n")
    h.session(agent="steady", threshold=50, builtin=TOOLS).send("go")
    text = warning_text(h)
    assert "context-notes.md" in text and "new_context" not in text


def test_segue_run_rolls_over_on_the_model_call(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    model = script(
        tmp_path,
        [{"toolCalls": [echo("alpha", 50)]}, {"toolCalls": [new_context()]}, {"text": "done"}],
        window=WINDOW,
    )

    def segue(*args: str) -> Any:
        return CliRunner().invoke(cli, ["--home", str(home), "-w", "nc", *args])

    assert segue("settings", "set", "experiments.tokenBudget", "true").exit_code == 0
    result = segue("run", "-m", model, "--json", "go")
    assert result.exit_code == 0, result.output
    closing = json.loads(result.stdout.strip().splitlines()[-1])
    assert closing["status"] == "completed" and closing["rollovers"] == 1
    rows = list(HistoryStore(Layout(home, "nc")).rows())
    window_id = assert_model_rollover_rows_loose(rows)
    assert closing["windowId"] == window_id
    assert tool_output(rows[-2], "new_context") == {"ok": True, "windowId": window_id}
    assert segue("history", "verify").exit_code == 0


def assert_model_rollover_rows_loose(rows: list[Row]) -> str:
    (boundary,) = boundaries(rows)
    mux = boundary.metadata["muxMetadata"]
    assert mux["requestedBy"] == "model" and mux["reason"] == "on-send"
    assert is_rollover_boundary(boundary)
    return f"w:{boundary.sequence}"


def test_a_refused_admission_answers_not_allowed_and_keeps_the_step(tmp_path: Path) -> None:
    """The admission refuses (here: its fit check says no fresh window fits): the call is
    answered not_allowed with the reason, nothing is rolled over, and the step (with the
    other call's result) settles in the old window."""
    h = harness(
        tmp_path,
        [{"toolCalls": [echo("alpha", 5), new_context()]}, {"text": "ok"}],
        context_window=WINDOW,
    )

    def refuse_at_fit(phase: str) -> None:
        if phase == "fit":
            raise TurnPaused("a fresh context window would not fit the next request")

    result = h.session(builtin=TOOLS, checkpoint=refuse_at_fit).send("go")
    assert result.status == "completed" and result.rollovers == 0
    rows = h.rows()
    assert boundaries(rows) == []
    assert tool_output(rows[1], "echo")["ok"] is True
    output = tool_output(rows[1], "new_context")
    assert output == {
        "ok": False,
        "error": {
            "code": "not_allowed",
            "message": "a fresh context window would not fit the next request",
        },
    }


def test_sibling_calls_of_the_step_open_the_new_window(tmp_path: Path) -> None:
    h = harness(
        tmp_path,
        [{"toolCalls": [echo("alpha", 5), new_context()]}, {"text": "ok"}],
        context_window=WINDOW,
    )
    assert h.session(builtin=TOOLS).send("go").rollovers == 1
    rows = h.rows()
    window_id = assert_model_rollover_rows(rows, previous_window="w:0")
    step = rows[-2]
    assert rows.index(step) == rows.index(boundaries(rows)[0]) + 3
    assert tool_output(step, "echo")["text"] == " ".join(["alpha"] * 5)
    assert tool_output(step, "new_context") == {"ok": True, "windowId": window_id}
    assert h.requests()[-1].rows[0].mux_type == "context-window-lead-in"
