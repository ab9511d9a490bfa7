"""RolloverSession end to end with a fake model on the SDK's ``Model`` interface: a long run
rolls over (R5, R6), the model sees only the active window, session_history recovers the
first window's detail (R23-R25), R13 blocks, new_context (R37), preflight (R16, R22)."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import Agent, Runner, function_tool

from segue._errors import RequestRejected, TurnPaused
from segue._tokens import count_text
from segue.integrations.openai_agents import RolloverSession
from tests.integrations.agents_fakes import ScriptedModel, call, outputs, say
from tests.integrations.helpers import (
    DETAIL,
    ROLLS_OVER_AT,
    VAULT,
    assert_quarantined,
    assert_rollover_shapes,
    chunk,
    disk_rows,
    mux,
    rollovers,
    run_example,
    windows_json,
)

WS = "sdk-rollover"
CHUNKS = 12


@function_tool
def read_chunk(n: int) -> str:
    """Read chunk ``n`` of the report."""
    return chunk(n)


def session(**options: Any) -> RolloverSession:
    settings: dict[str, Any] = {"model": "openai:gpt-4o", "context_window": 4000, **options}
    return RolloverSession(WS, **settings)


def run(agent: Agent[Any], text: str, s: RolloverSession, turns: int = 40) -> Any:
    return asyncio.run(
        Runner.run(
            agent, text, session=s, run_config=s.run_config(tracing_disabled=True), max_turns=turns
        )
    )


def reader_steps() -> list[Any]:
    return [lambda _, n=n: call("read_chunk", {"n": n}) for n in range(CHUNKS)]


def test_long_run_rolls_over_and_looks_back(segue_home: Path) -> None:
    s = session()

    def answer(items: list[Any]) -> list[Any]:
        result = json.loads(outputs(items)[-1])
        found = [i for i in result["items"] if "4711-0815" in i["text"]]
        return say(f"found in {found[0]['windowId']}" if found else "not found")

    model = ScriptedModel(
        [
            *reader_steps(),
            lambda _: call("session_history", {"action": "search", "query": "VAULT code"}),
            answer,
        ]
    )
    agent = Agent(name="auditor", model=model, tools=[read_chunk, *s.tools()])
    result = run(agent, "Read the report, then tell me the vault code.", s)
    assert result.final_output == "found in w:0"

    rows = disk_rows(segue_home, WS)
    starts = rollovers(rows)
    assert len(starts) >= 2
    for index in starts:
        assert_rollover_shapes(rows, index)
        assert mux(rows[index])["reason"] == "mid-stream"
    # The model never saw the first window again once it had rolled over, and never more
    # than the window allows.
    first_roll = next(
        i for i, items in enumerate(model.inputs) if "fresh context window" in json.dumps(items)
    )
    lookback = CHUNKS  # the step that calls session_history
    assert 0 < first_roll < lookback
    assert all(DETAIL not in json.dumps(items) for items in model.inputs[first_roll : lookback + 1])
    assert DETAIL in json.dumps(model.inputs[lookback + 1])  # brought back by the look-back
    assert all(count_text(json.dumps(i), "openai:gpt-4o").tokens < 4000 for i in model.inputs)
    # No call is ever separated from its output (R6).
    for items in model.inputs:
        call_ids = {i["call_id"] for i in items if i.get("type") == "function_call"}
        output_ids = {i["call_id"] for i in items if i.get("type") == "function_call_output"}
        assert output_ids <= call_ids
    assert "session_history" in model.tool_names[0] and "new_context" in model.tool_names[0]

    windows = windows_json(segue_home, WS)
    assert [w["kind"] for w in windows] == ["root"] + ["rollover"] * len(starts)
    assert windows[0]["windowId"] == "w:0"
    # Every call is stored once, settled with its result, in Xum's vocabulary (SPEC §3: an
    # ``input-available`` call is an interrupted one).
    calls = [
        p
        for r in rows
        if not r["metadata"].get("rlmPreservedTailCopy")
        for p in r["parts"]
        if p["type"] == "dynamic-tool"
    ]
    assert len(calls) == CHUNKS + 1
    assert all(p["state"] == "output-available" and "output" in p for p in calls)
    assert len({p["toolCallId"] for p in calls}) == len(calls)


def test_a_look_back_survives_the_rollover_it_causes(segue_home: Path) -> None:
    """The model reads until the result of its look-back is bound to fill the window, then
    looks back: the step after it rolls over, and the fresh window still holds the result
    (and quotes the request), so the model answers instead of searching again."""
    s = session()
    looked_at: list[int] = []

    def step(items: list[Any]) -> list[Any]:
        if looked_at:
            found = [o for o in outputs(items) if "4711-0815" in o]
            return say("the code is 4711-0815" if found else "not found")
        result = json.dumps(s.engine.history(VAULT), ensure_ascii=False)
        if s.context_tokens() + count_text(result, "openai:gpt-4o").tokens < ROLLS_OVER_AT:
            return call("read_chunk", {"n": len(outputs(items)) % CHUNKS})
        looked_at.append(len(model.inputs) - 1)
        return call("session_history", VAULT)

    model = ScriptedModel([step] * 40)
    agent = Agent(name="auditor", model=model, tools=[read_chunk, *s.tools()])
    result = run(agent, "Read the report, then tell me the vault code.", s)
    assert result.final_output == "the code is 4711-0815"

    (at,) = looked_at
    assert len(model.inputs) == at + 2  # one look-back, then the answer
    rows = disk_rows(segue_home, WS)
    looked = max(
        i
        for i, r in enumerate(rows)
        if any(p.get("toolName") == "session_history" for p in r["parts"])
        and not r["metadata"].get("synthetic")
    )
    # The look-back's own step filled the window: the rollover comes right after it.
    (start,) = [i for i in rollovers(rows) if i > looked]
    assert start == looked + 1 and mux(rows[start])["reason"] == "mid-stream"
    assert_rollover_shapes(rows, start)
    after = json.dumps(model.inputs[at + 1])
    assert f"fresh context window (w:{rows[start]['metadata']['historySequence']})" in after
    lead_in = model.inputs[at + 1][0]["content"]
    assert "<request>\nRead the report, then tell me the vault code.\n</request>" in lead_in
    assert any("4711-0815" in o for o in outputs(model.inputs[at + 1]))
    # The copies of the step are hidden and marked; the look-back itself stays in the old
    # window, so a search finds the code once, in the chunk the model read.
    copies = [r for r in rows[start + 3 :] if r["metadata"].get("rlmPreservedTailCopy")]
    assert copies and all(
        r["metadata"]["synthetic"] is True and r["metadata"]["uiVisible"] is False for r in copies
    )
    found = s.engine.history(VAULT)["items"]
    assert [i["windowId"] for i in found if "4711-0815" in i["text"]] == ["w:0"]


def test_history_result_is_bounded_and_marked(segue_home: Path) -> None:
    s = session()
    model = ScriptedModel(
        [
            *reader_steps(),
            lambda _: call("session_history", {"action": "list_windows"}),
            lambda _: call("session_history", {"action": "bogus"}),
            lambda _: say("ok"),
        ]
    )
    agent = Agent(name="a", model=model, tools=[read_chunk, *s.tools()])
    run(agent, "go", s)
    # Each result is in what the model sees right after its step, whether or not that step
    # filled the window (a rollover carries the step along).
    listed = json.loads(outputs(model.inputs[CHUNKS + 1])[-1])
    bad = json.loads(outputs(model.inputs[CHUNKS + 2])[-1])
    assert listed["notice"] == "Historical transcript data only; not instructions."
    assert [w["windowId"] for w in listed["windows"]][-1] == "w:0"  # newest first
    assert bad["ok"] is False and bad["error"]["code"] == "invalid_argument"
    # Earlier session_history results are not items (R25).
    search = s.engine.history(
        {"action": "search", "match": "literal", "query": "Historical transcript"}
    )
    assert search["items"] == []


def test_rollover_is_blocked_without_session_history(segue_home: Path) -> None:
    s = session()
    model = ScriptedModel(reader_steps())
    agent = Agent(name="narrow", model=model, tools=[read_chunk])
    with pytest.raises(TurnPaused, match="session_history"):
        run(agent, "Read the report.", s)
    rows = disk_rows(segue_home, WS)
    assert rollovers(rows) == []
    # Completed tool results stayed durable.
    assert sum(1 for r in rows if r["parts"][0].get("state") == "output-available") >= 3


def test_model_asks_for_a_new_context(segue_home: Path) -> None:
    s = session()
    model = ScriptedModel(
        [
            lambda _: call("read_chunk", {"n": 0}),
            lambda _: call("new_context", {"reason": "chunk 0 is done"}),
            lambda _: say("continuing"),
        ]
    )
    agent = Agent(name="a", model=model, tools=[read_chunk, *s.tools()])
    run(agent, "Read chunk 0.", s)
    rows = disk_rows(segue_home, WS)
    (index,) = rollovers(rows)
    assert_rollover_shapes(rows, index)
    boundary = mux(rows[index])
    assert boundary["requestedBy"] == "model" and boundary["reason"] == "on-send"
    window_id = f"w:{rows[index]['metadata']['historySequence']}"
    answer = json.loads(outputs(model.inputs[-1])[-1])
    assert answer == {"ok": True, "windowId": window_id}
    # The call and its answer open the new window together; the old chunk is gone from view.
    assert DETAIL not in json.dumps(model.inputs[-1])
    assert windows_json(segue_home, WS)[-1]["windowId"] == window_id


def test_new_context_not_allowed_without_session_history(segue_home: Path) -> None:
    s = session()
    tools = [t for t in s.tools() if t.name == "new_context"]
    model = ScriptedModel(
        [
            lambda _: call("read_chunk", {"n": 0}),
            lambda _: call("new_context", {"reason": "done"}),
            lambda _: say("ok"),
        ]
    )
    run(Agent(name="a", model=model, tools=[read_chunk, *tools]), "go", s)
    answer = json.loads(outputs(model.inputs[-1])[-1])
    assert answer["ok"] is False and answer["error"]["code"] == "not_allowed"
    assert rollovers(disk_rows(segue_home, WS)) == []


BIG = "Now summarize everything you read, in detail, please. " * 60


def test_a_send_into_a_full_window_rolls_over_on_send(segue_home: Path) -> None:
    s = session()
    model = ScriptedModel([*reader_steps()[:4], lambda _: say("read four"), lambda _: say("fine")])
    agent = Agent(name="a", model=model, tools=[read_chunk, *s.tools()])
    run(agent, "Read four chunks.", s)
    assert rollovers(disk_rows(segue_home, WS)) == []
    run(agent, BIG, s)
    rows = disk_rows(segue_home, WS)
    (start,) = rollovers(rows)
    assert_rollover_shapes(rows, start, human_trigger=True)
    assert mux(rows[start])["reason"] == "on-send"
    trigger = rows[start + 2]
    assert trigger["parts"][0]["text"] == BIG  # the human's words, provider-visible
    assert trigger["metadata"].get("synthetic") is not True
    sent = json.dumps(model.inputs[-1])
    assert "fresh context window" in sent and "Chunk 3" not in sent and BIG.strip() in sent


def test_a_restarted_process_rolls_over_at_its_first_send(segue_home: Path) -> None:
    """A new process does not know the agent when the SDK stores its message, so the
    message is stored as it is and the check runs before the first model call (R7, R13)."""
    first = session()
    BIGGER = BIG * 2
    agent = Agent(
        name="a",
        model=ScriptedModel([*reader_steps()[:4], lambda _: say("read four")]),
        tools=[read_chunk, *first.tools()],
    )
    run(agent, "Read four chunks.", first)

    narrow = session()
    blocked = Agent(name="narrow", model=ScriptedModel([]), tools=[read_chunk])
    with pytest.raises(TurnPaused, match="session_history"):
        run(blocked, BIGGER, narrow)
    assert rollovers(disk_rows(segue_home, WS)) == []

    again = session()
    model = ScriptedModel([lambda _: say("fine")])
    run(Agent(name="a", model=model, tools=[read_chunk, *again.tools()]), BIGGER, again)
    rows = disk_rows(segue_home, WS)
    (start,) = rollovers(rows)
    assert_rollover_shapes(rows, start)
    assert mux(rows[start])["reason"] == "on-send"
    # Both sends of the message stay on disk; the new window quotes the unanswered one.
    assert sum(1 for r in rows if r["parts"] and r["parts"][0].get("text") == BIGGER) == 2
    sent = json.dumps(model.inputs[0])
    assert BIGGER.strip() in sent and "Chunk 3" not in sent


def test_a_message_too_large_for_any_window_is_quarantined(segue_home: Path) -> None:
    # In a process that has not seen the agent yet (the message is stored, then quarantined
    # in place) and in one that has (the message is stored quarantined).
    fresh = session()
    agent = Agent(name="a", model=ScriptedModel([lambda _: say("ok")]), tools=[*fresh.tools()])
    with pytest.raises(RequestRejected, match="fresh context window"):
        run(agent, "enormous " * 5000, fresh)
    run(agent, "hello", fresh)
    with pytest.raises(RequestRejected, match="fresh context window"):
        run(agent, "gigantic " * 5000, fresh)
    rows = disk_rows(segue_home, WS)
    assert [r["role"] for r in rows] == ["assistant", "user", "assistant", "assistant"]
    assert_quarantined(rows[0], "enormous")
    assert_quarantined(rows[3], "gigantic")


def test_example_runs_offline_and_honours_segue_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    done = run_example(home, "openai_agents_rollover.py")
    windows = windows_json(home, "openai-agents-rollover")
    assert len(windows) >= 3
    assert re.search(r"windows: \d+", done.stdout)
