"""End to end through the turn loop: real store, scripted provider, its requestLog."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from segue import RolledOver, Warned, make_row
from tests.front import is_manual_reset, is_rollover_boundary, is_synthetic_continuation
from tests.session.helpers import echo, harness, request_text

WINDOW = 8000  # reserve 2000, hard ceiling 6000; threshold 50 → rolls over at 4400, warns at 3200


def filler(word: str, n: int) -> str:
    return " ".join([word] * n)


def test_plain_turn_completes_and_persists(tmp_path: Path) -> None:
    h = harness(tmp_path, [{"text": "Hello there."}], context_window=WINDOW)
    result = h.session().send("hi")
    assert result.status == "completed"
    assert result.text == "Hello there."
    closing = result.to_json()
    assert closing == {
        "status": "completed",
        "reason": None,
        "windowId": "w:0",
        "rollovers": 0,
        "text": "Hello there.",
        "usage": closing["usage"],  # the scripted provider's own count (see test_run_cli)
    }
    assert result.usage is not None and result.usage["outputTokens"] > 0
    rows = h.rows()
    assert [r.role for r in rows] == ["user", "assistant"]
    assert [r.sequence for r in rows] == [0, 1]
    assert rows[1].metadata["usage"]["inputTokens"] > 0


def test_mid_stream_rollover_then_retrieval_of_the_first_window(tmp_path: Path) -> None:
    h = harness(
        tmp_path,
        [
            {"toolCalls": [echo("alpha", 1400)]},
            {"toolCalls": [echo("beta", 1400)]},
            {"toolCalls": [echo("gamma", 1400)]},
            {"text": "finished the three steps"},
            {
                "toolCalls": [
                    {
                        "name": "session_history",
                        "input": {"action": "search", "query": "ALPHA ALPHA"},
                    }
                ]
            },
            {"text": "The first word was alpha."},
        ],
        context_window=WINDOW,
    )
    session = h.session(threshold=50)
    first = session.send("run the three steps")
    assert first.status == "completed"
    assert first.rollovers == 1
    assert any(isinstance(e, Warned) for e in h.events)
    rolled = [e for e in h.events if isinstance(e, RolledOver)]
    assert [e.reason for e in rolled] == ["mid-stream"]

    requests = h.requests()
    after = requests[3]
    seen = request_text(after)
    assert "alpha" not in seen and "beta" not in seen
    lead_in, continuation, carried = after.rows
    assert [r.mux_type for r in after.rows] == ["context-window-lead-in", "normal", None]
    assert is_synthetic_continuation(continuation)
    assert continuation.text == "Continue"
    assert "session_history" in lead_in.text
    # The turn goes on knowing what it was doing: the lead-in quotes the request that owns
    # the turn, and the step that filled the window comes along with its result.
    assert "<request>\nrun the three steps\n</request>" in lead_in.text
    assert carried.flag("rlmPreservedTailCopy") and carried.flag("synthetic")
    assert carried.parts[0].output["text"].startswith("gamma")

    # The batch is contiguous in the transcript, the boundary strictly valid.
    rows = h.rows()
    index = next(i for i, r in enumerate(rows) if is_rollover_boundary(r))
    assert [r.mux_type for r in rows[index : index + 3]] == [
        "context-window-rollover",
        "context-window-lead-in",
        "normal",
    ]
    assert is_synthetic_continuation(rows[index + 2])
    assert rows[index + 3].flag("rlmPreservedTailCopy")
    # The tool call and its result stay together in the old window's last step.
    gamma_row = rows[index - 1]
    assert gamma_row.parts[0].toolName == "echo"
    assert gamma_row.parts[0].output["text"].startswith("gamma")

    second = session.send("what was the first word?")
    assert second.status == "completed"
    assert second.rollovers == 0
    (history_result,) = [
        p.output for r in h.rows() for p in r.parts if p.toolName == "session_history"
    ]
    assert history_result["ok"] is True
    assert any("alpha" in item["text"] for item in history_result["items"])


def test_a_turn_that_rolls_over_twice_quotes_its_request_in_both_windows(tmp_path: Path) -> None:
    """The second window began mid-turn and holds no human message: its own lead-in's quote
    is what the third window quotes again, and each new window gets the step that filled
    the one before."""
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"]
    h = harness(
        tmp_path,
        [*({"toolCalls": [echo(w, 1400)]} for w in words), {"text": "all six done"}],
        context_window=WINDOW,
    )
    result = h.session(threshold=50).send("run the six steps")
    assert result.status == "completed", result.reason
    assert result.rollovers >= 2
    lead_ins = [r for r in h.rows() if r.mux_type == "context-window-lead-in"]
    assert len(lead_ins) == result.rollovers
    assert all("<request>\nrun the six steps\n</request>" in r.text for r in lead_ins)
    for request in h.requests():
        first = request.rows[0]
        if first.mux_type != "context-window-lead-in":
            continue
        (carried,) = [r for r in request.rows if r.flag("rlmPreservedTailCopy")]
        assert carried.parts[0].toolName == "echo"  # the step that filled the last window


def prime(h_rows: list[tuple[str, str]], h: object) -> None:
    store = h.store  # type: ignore[attr-defined]
    store.append(
        [
            make_row(role, text, id=f"p{i}")  # type: ignore[arg-type]
            for i, (role, text) in enumerate(h_rows)
        ]
    )


def test_rollover_on_send_carries_the_message_into_the_new_window(tmp_path: Path) -> None:
    h = harness(tmp_path, [{"text": "fresh answer"}], context_window=WINDOW)
    prime([("user", filler("old", 2000)), ("assistant", filler("reply", 2000))], h)
    result = h.session(threshold=50).send("the new question")
    assert result.status == "completed"
    assert result.rollovers == 1
    (request,) = h.requests()
    assert [r.mux_type for r in request.rows] == [
        "context-window-lead-in",
        "context-window-continuation",
    ]
    # the human's own message, tagged as Xum tags it, not a synthetic row
    assert request.rows[1].text == "the new question"
    assert not request.rows[1].flag("synthetic")
    assert "old" not in request_text(request)
    boundary = next(r for r in h.rows() if is_rollover_boundary(r))
    assert boundary.metadata["muxMetadata"]["reason"] == "on-send"
    assert result.window_id == f"w:{boundary.sequence}"


def test_clear_soft_has_no_lead_in_and_is_a_noop_when_empty(tmp_path: Path) -> None:
    h = harness(tmp_path, [{"text": "one"}, {"text": "two"}], context_window=WINDOW)
    session = h.session()
    assert session.clear_soft() is False  # nothing provider-eligible yet
    assert h.rows() == []
    session.send("secret plan")
    assert session.clear_soft() is True
    assert session.clear_soft() is False
    assert is_manual_reset(h.rows()[-1])
    session.send("after the clear")
    last = h.requests()[-1]
    assert [r.text for r in last.rows] == ["after the clear"]
    assert "secret plan" not in request_text(last)


def test_oversized_message_is_rejected_and_quarantined(tmp_path: Path) -> None:
    h = harness(tmp_path, [{"text": "ok"}], context_window=WINDOW)
    session = h.session()
    result = session.send(filler("huge", 7000))
    assert result.status == "rejected"
    assert result.reason is not None and "fresh context window" in result.reason
    assert h.requests() == []  # rejected before any provider call
    (row,) = h.rows()
    assert row.role == "assistant" and row.parts == ()
    assert row.metadata["contextBudgetRejected"] is True
    assert row.metadata["contextBudgetRejectedMessage"]["role"] == "user"
    session.send("small follow-up")
    assert "huge" not in request_text(h.requests()[-1])


def test_agent_without_session_history_is_blocked_not_summarized(tmp_path: Path) -> None:
    h = harness(tmp_path, [{"text": "never sent"}], context_window=WINDOW)
    h.agent_file("narrow", "---\nbase: exec\ntools:\n  remove: [session_history]\n---\n")
    prime([("user", filler("old", 2000)), ("assistant", filler("reply", 2000))], h)
    before = h.rows()
    result = h.session(agent="narrow", threshold=50).send("go on")
    assert result.status == "paused"
    assert result.reason is not None and "session_history" in result.reason
    assert h.rows() == before  # no rollover, no summary, nothing written
    assert h.requests() == []


def test_custom_agent_with_session_history_rolls_over(tmp_path: Path) -> None:
    h = harness(tmp_path, [{"text": "fine"}], context_window=WINDOW)
    h.agent_file("reader", "---\ntools:\n  add: [session_history]\n---\nRead only.\n")
    prime([("user", filler("old", 2000)), ("assistant", filler("reply", 2000))], h)
    result = h.session(agent="reader", threshold=50).send("go on")
    assert result.status == "completed"
    assert result.rollovers == 1
    assert [t["name"] for t in h.requests()[0].tools] == ["session_history"]


def test_experiment_off_compacts_and_hides_session_history(tmp_path: Path) -> None:
    h = harness(
        tmp_path,
        [{"text": "Summary: the user talked about old things."}, {"text": "answer"}],
        context_window=WINDOW,
    )
    prime([("user", filler("old", 2000)), ("assistant", filler("reply", 2000))], h)
    result = h.session(experiment=False, threshold=50).send("next")
    assert result.status == "completed"
    assert result.rollovers == 0
    compact_request, answer_request = h.requests()
    assert "session_history" not in [t["name"] for t in answer_request.tools]
    assert answer_request.rows[0].flag("compactionBoundary")
    assert "old things" in answer_request.rows[0].text
    assert "old old" not in request_text(answer_request)
    # The summary request offers the window's tools (a cached prefix starts with them).
    assert compact_request.tools == answer_request.tools != ()


def test_empty_summary_is_never_committed(tmp_path: Path) -> None:
    h = harness(tmp_path, [{"text": "   "}], context_window=WINDOW)
    prime([("user", "something")], h)
    before = h.rows()
    with pytest.raises(Exception, match="empty summary"):
        h.session().compact()
    assert h.rows() == before


def test_threshold_100_pauses_at_the_hard_ceiling_keeping_tool_results(tmp_path: Path) -> None:
    h = harness(
        tmp_path,
        [
            {"toolCalls": [echo("one", 1400), echo("two", 1400)]},
            {"toolCalls": [echo("three", 1400), echo("four", 1400)]},
            {"text": "unreachable"},
        ],
        context_window=WINDOW,
    )
    result = h.session(threshold=100).send("fill it up")
    assert result.status == "paused"
    assert result.reason is not None and "hard ceiling" in result.reason
    assert result.rollovers == 0
    rows = h.rows()
    assert not any(r.mux_type for r in rows)  # no warning, rollover or continuation
    outputs = [p.output["text"].split()[0] for r in rows for p in r.parts if p.output]
    assert outputs == ["one", "two", "three", "four"]  # completed siblings stay durable


def test_provider_overflow_triggers_one_emergency_rollover(tmp_path: Path) -> None:
    h = harness(
        tmp_path,
        [{"error": {"kind": "context_overflow"}}, {"text": "recovered"}],
        context_window=WINDOW,
    )
    prime([("user", "earlier work"), ("assistant", "done earlier")], h)
    result = h.session().send("please continue with X")
    assert result.status == "completed"
    assert result.rollovers == 1
    retry = h.requests()[1]
    assert is_synthetic_continuation(retry.rows[-1])
    assert "please continue with X" in retry.rows[0].text
    assert "side effects" in retry.rows[0].text
    boundary = next(r for r in h.rows() if is_rollover_boundary(r))
    assert boundary.metadata["muxMetadata"]["reason"] == "context-exceeded"


def test_provider_overflow_with_experiment_off_pauses_cleanly(tmp_path: Path) -> None:
    h = harness(tmp_path, [{"error": {"kind": "context_overflow"}}], context_window=WINDOW)
    result = h.session(experiment=False).send("hi")
    assert result.status == "paused"
    assert [r.role for r in h.rows()] == ["user"]


def test_restart_derives_pressure_from_disk_and_does_not_roll_over_twice(
    tmp_path: Path,
) -> None:
    h = harness(tmp_path, [{"text": "a"}, {"text": "b"}], context_window=WINDOW)
    prime([("user", filler("old", 2000)), ("assistant", filler("reply", 2000))], h)
    assert h.session(threshold=50).send("first").rollovers == 1
    again = h.session(threshold=50)  # a new process would build a new session like this
    result = again.send("second")
    assert result.rollovers == 0
    assert sum(is_rollover_boundary(r) for r in h.rows()) == 1
    assert json.dumps(result.to_json())
