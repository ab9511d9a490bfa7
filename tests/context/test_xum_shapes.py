"""Every row kind segue writes has exactly the shape of SPEC.md §3 "Rows Xum writes", field by
field (R5, R14, R22): what Xum validates, nothing more on the boundary."""

from __future__ import annotations

from typing import Any

from segue import Part, Row, decode_row, encode_row, make_row
from segue._context.active import active_rows
from segue._context.boundaries import (
    is_compaction_boundary,
    is_strict_rollover,
    is_synthetic_continuation,
    is_ui_hidden,
)
from segue._context.rollover import (
    compaction_continuation_row,
    quarantined,
    rollover_batch,
    warning_row,
)
from segue._messages import row_to_obj
from segue._session.compaction import compaction_row

TEXT_DONE = "done"


def obj(row: Row) -> dict[str, Any]:
    """The row as written to disk and read back."""
    out = row_to_obj(decode_row(encode_row(row)))
    assert isinstance(out, dict)
    return out


def human(text: str, **meta: Any) -> Row:
    return make_row("user", text, id="u1", metadata={"timestamp": 7, **meta})


def batch(trigger: Row | None, **kw: Any) -> list[Row]:
    args: dict[str, Any] = {
        "ids": ("b1", "l1", "c1"),
        "rollover_id": "ro-1",
        "reason": "on-send",
        "new_window_id": "w:12",
        "previous_window_id": "w:3",
        "context_tokens": 7600,
        "max_tokens": 10_000,
        "trigger": trigger,
        "now_ms": 9,
        **kw,
    }
    return rollover_batch(**args)


def test_rollover_boundary_is_exactly_xums() -> None:
    boundary = batch(human("go"), flush_opportunity=True)[0]
    assert obj(boundary) == {
        "id": "b1",
        "role": "assistant",
        "metadata": {
            "timestamp": 9,
            "contextBoundaryKind": "reset",
            "rolloverId": "ro-1",  # the mirror the spec allows; readers take muxMetadata's
            "muxMetadata": {
                "type": "context-window-rollover",
                "rolloverId": "ro-1",
                "reason": "on-send",
                "previousWindowId": "w:3",
                "flushOpportunity": True,
                "contextTokens": 7600,
                "maxTokens": 10_000,
            },
        },
        "parts": [],
    }
    assert "synthetic" not in boundary.metadata and "uiVisible" not in boundary.metadata
    assert is_strict_rollover(boundary)


def test_model_requested_rollover_names_its_requester() -> None:
    boundary = batch(None, reason="on-send", requested_by_model=True)[0]
    assert boundary.metadata["muxMetadata"]["requestedBy"] == "model"
    assert boundary.metadata["muxMetadata"]["flushOpportunity"] is False
    assert is_strict_rollover(boundary)


def test_lead_in_is_exactly_xums() -> None:
    lead_in = obj(batch(human("go"))[1])
    assert lead_in["role"] == "user"
    assert lead_in["metadata"] == {
        "timestamp": 9,
        "synthetic": True,
        "uiVisible": False,
        "muxMetadata": {"type": "context-window-lead-in", "rolloverId": "ro-1"},
    }
    (part,) = lead_in["parts"]
    assert part["type"] == "text" and "session_history" in part["text"]


def test_triggering_message_keeps_the_humans_words_and_gains_the_tag() -> None:
    mine = human("run the linter", muxMetadata={"type": "normal", "agentId": "exec"})
    trigger = obj(batch(mine)[2])
    assert trigger == {
        "id": "u1",
        "role": "user",
        "metadata": {
            "timestamp": 7,
            "muxMetadata": {
                "type": "context-window-continuation",
                "agentId": "exec",  # merged into what it had
                "rolloverId": "ro-1",
            },
        },
        "parts": [{"type": "text", "text": "run the linter", "state": TEXT_DONE}],
    }
    row = decode_row(encode_row(batch(mine)[2]))
    assert not is_ui_hidden(row)
    rows = batch(mine)
    assert active_rows(rows)[-1].text == "run the linter"  # never dropped from a request


def test_synthetic_continuation_is_exactly_xums() -> None:
    after_compaction = compaction_continuation_row(row_id="c1", now_ms=9)
    for row in (batch(None, reason="mid-stream")[2], after_compaction):
        assert obj(row) == {
            "id": "c1",
            "role": "user",
            "metadata": {
                "timestamp": 9,
                "synthetic": True,
                "uiVisible": False,
                "muxMetadata": {"type": "normal", "contextBudgetContinuation": True},
            },
            "parts": [{"type": "text", "text": "Continue", "state": TEXT_DONE}],
        }
        assert is_synthetic_continuation(row) and is_ui_hidden(row)


def test_budget_warning_is_exactly_xums() -> None:
    row = warning_row(
        row_id="w1",
        now_ms=5,
        percent=61,
        label="Rolls over by 75%",
        context_tokens=6100,
        max_tokens=10_000,
        budget_tokens=7500,
    )
    out = obj(row)
    assert out["metadata"] == {
        "timestamp": 5,
        "synthetic": True,
        "uiVisible": True,
        "muxMetadata": {
            "type": "context-budget-warning",
            "contextTokens": 6100,
            "maxTokens": 10_000,
            "budgetTokens": 7500,
        },
    }
    assert out["role"] == "user"
    assert not is_ui_hidden(row)  # shown, as a machine message


class _Provider:
    model = "scripted:x"


def test_compaction_boundary_is_exactly_xums() -> None:
    for reason, compacted in (("manual", "user"), ("idle", "idle"), ("automatic", True)):
        row = compaction_row(
            "the gist",
            row_id="s1",
            now_ms=3,
            epoch=2,
            reason=reason,
            provider=_Provider(),  # type: ignore[arg-type]
            usage={"inputTokens": 10, "outputTokens": 2},
        )
        meta = obj(row)["metadata"]
        assert meta["compactionBoundary"] is True
        assert meta["compacted"] == compacted
        assert meta["compactionEpoch"] == 2
        assert row.role == "assistant" and "the gist" in row.text
        assert is_compaction_boundary(decode_row(encode_row(row)))


def test_quarantined_row_is_exactly_r22() -> None:
    original = make_row(
        "user",
        "huge",
        id="u9",
        metadata={"timestamp": 4, "historySequence": 9, "muxMetadata": {"type": "normal"}},
    )
    out = obj(quarantined(original))
    assert out == {
        "id": "u9",
        "role": "assistant",
        "metadata": {
            "historySequence": 9,
            "timestamp": 4,
            "synthetic": True,
            "uiVisible": False,
            "contextBudgetRejected": True,
            "contextBudgetRejectedMessage": {
                "role": "user",
                "parts": [{"type": "text", "text": "huge", "state": TEXT_DONE}],
                "metadata": {"timestamp": 4, "muxMetadata": {"type": "normal"}},
            },
        },
        "parts": [],
    }


def test_calls_without_results_never_reach_a_request() -> None:
    settled = Part(
        type="dynamic-tool", toolCallId="t1", toolName="bash", state="output-available",
        input={"command": "ls"}, output="a b",
    )
    errored = Part(
        type="dynamic-tool", toolCallId="t2", toolName="bash", state="output-error",
        input={"command": "x"}, extra={"errorText": "boom"},
    )
    rows = [human("go")]
    for n, state in enumerate(["input-available", "input-streaming", "output-redacted"]):
        call = Part(
            type="dynamic-tool", toolCallId=f"i{n}", toolName="bash", state=state, input={}
        )
        rows.append(make_row("assistant", "working", id=f"a{n}", parts=[settled, call, errored]))
    rows.append(make_row("assistant", id="only", parts=[Part(
        type="dynamic-tool", toolCallId="z", toolName="bash", state="input-available", input={}
    )]))
    sent = active_rows(rows)
    assert [r.id for r in sent] == ["u1", "a0", "a1", "a2"]  # a row left empty is left out
    for row in sent[1:]:
        assert [p.toolCallId for p in row.parts if p.type == "dynamic-tool"] == ["t1", "t2"]
        assert row.text == "working"
    assert len(rows[1].parts) == 4  # the stored row is untouched
