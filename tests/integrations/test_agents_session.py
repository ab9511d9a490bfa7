"""The Agents SDK's own session behaviour (ordering, limit, pop, clear) on segue's store,
in one process and across real processes sharing a workspace."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import Agent, RunConfig, Runner
from agents.memory import Session

from segue.integrations.openai_agents import SegueSession
from tests.integrations.agents_fakes import ScriptedModel, say
from tests.integrations.helpers import disk_rows, env, run_segue

WS = "sdk-session"


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def reply(text: str) -> dict[str, Any]:
    return {
        "id": f"msg_{text}",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_is_the_sdk_session_protocol(segue_home: Path) -> None:
    assert isinstance(SegueSession(WS), Session)


def test_order_limit_pop_clear(segue_home: Path) -> None:
    session = SegueSession(WS)
    items = [
        user("one"),
        reply("two"),
        {"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": '{"q": 1}'},
        {"type": "function_call_output", "call_id": "c1", "output": "found"},
    ]
    run(session.add_items(items[:2]))
    run(session.add_items(items[2:]))
    assert run(session.get_items()) == items  # verbatim, in order
    assert run(session.get_items(limit=2)) == items[2:]
    assert run(session.get_items(limit=0)) == []

    assert run(session.pop_item()) == items[3]
    assert run(session.get_items()) == items[:3]
    rows = disk_rows(segue_home, WS)
    assert [r["metadata"]["openaiAgentsItem"] for r in rows] == items[:3]
    # The call whose output was popped is a call alone again: interrupted, never sent (§3).
    assert rows[2]["parts"][0]["state"] == "input-available"
    # The popped row's sequence number is never reused.
    run(session.add_items([user("five")]))
    seqs = [r["metadata"]["historySequence"] for r in disk_rows(segue_home, WS)]
    assert seqs == [0, 1, 3, 4]

    run(session.clear_session())
    assert run(session.get_items()) == []
    assert disk_rows(segue_home, WS) == []
    assert run(session.pop_item()) is None


def test_rows_are_xum_shaped(segue_home: Path) -> None:
    session = SegueSession(WS)
    run(
        session.add_items(
            [
                user("hello"),
                {"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "c1", "output": "found"},
                reply("done"),
            ]
        )
    )
    rows = disk_rows(segue_home, WS)
    assert [r["role"] for r in rows] == ["user", "assistant", "assistant"]
    assert rows[0]["parts"] == [{"type": "text", "text": "hello", "state": "done"}]
    # The call and its output are one settled call, as Xum stores one (SPEC §3): not an
    # interrupted call (``input-available``) beside a second copy of it.
    assert rows[1]["parts"] == [
        {
            "type": "dynamic-tool",
            "toolCallId": "c1",
            "toolName": "lookup",
            "input": {},
            "state": "output-available",
            "output": "found",
        }
    ]
    assert all(r["workspaceId"] == WS for r in rows)
    listing = run_segue(segue_home, WS, "history", "search", "hello")
    assert listing.returncode == 0 and "hello" in listing.stdout


def test_pop_never_removes_a_floor(segue_home: Path) -> None:
    session = SegueSession(WS)
    run(session.add_items([user("secret")]))
    assert run_segue(segue_home, WS, "clear", "--soft").returncode == 0
    assert run(session.get_items()) == []  # the active window starts after the reset
    assert run(session.pop_item()) is None
    assert len(disk_rows(segue_home, WS)) == 2


def test_runner_continues_a_stored_session(segue_home: Path) -> None:
    session = SegueSession(WS)
    model = ScriptedModel([lambda _: say("first answer"), lambda _: say("second answer")])
    agent = Agent(name="a", model=model)
    config = RunConfig(tracing_disabled=True)
    run(Runner.run(agent, "first question", session=session, run_config=config))
    again = SegueSession(WS)  # a new object: everything comes from disk
    run(Runner.run(agent, "second question", session=again, run_config=config))
    texts = json.dumps(model.inputs[1])
    assert "first question" in texts and "first answer" in texts
    roles = [r["role"] for r in disk_rows(segue_home, WS)]
    assert roles == ["user", "assistant", "user", "assistant"]


_CHILD = """
import asyncio, json, sys
from segue.integrations.openai_agents import SegueSession
ws, op, arg = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
s = SegueSession(ws)
async def main():
    if op == "add":
        for i in range(arg["n"]):
            await s.add_items([{"role": "user", "content": f"{arg['tag']}-{i}"}])
    elif op == "pop":
        print(json.dumps(await s.pop_item()))
    print(json.dumps(await s.get_items()))
asyncio.run(main())
"""


def child(home: Path, op: str, arg: Any) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _CHILD, WS, op, json.dumps(arg)],
        env=env(home),
        stdout=subprocess.PIPE,
        text=True,
    )


def test_two_processes_share_one_ordered_session(segue_home: Path) -> None:
    writers = [child(segue_home, "add", {"n": 15, "tag": tag}) for tag in ("a", "b")]
    for proc in writers:
        proc.communicate(timeout=120)
        assert proc.returncode == 0
    items = run(SegueSession(WS).get_items())
    texts = [i["content"] for i in items]
    assert sorted(texts) == sorted([f"{t}-{i}" for t in "ab" for i in range(15)])
    for tag in "ab":  # each writer's items keep their order
        mine = [t for t in texts if t.startswith(tag)]
        assert mine == [f"{tag}-{i}" for i in range(15)]
    seqs = [r["metadata"]["historySequence"] for r in disk_rows(segue_home, WS)]
    assert seqs == sorted(seqs) and len(set(seqs)) == 30

    # A pop in another process is seen here, and the other way round.
    popper = child(segue_home, "pop", None)
    out, _ = popper.communicate(timeout=120)
    popped, remaining = (json.loads(line) for line in out.splitlines())
    assert popped == items[-1]
    assert run(SegueSession(WS).get_items()) == remaining == items[:-1]
    run(SegueSession(WS).add_items([user("from the parent")]))
    reader = child(segue_home, "add", {"n": 0, "tag": "x"})
    out, _ = reader.communicate(timeout=120)
    assert json.loads(out)[-1] == user("from the parent")
