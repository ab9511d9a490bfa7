"""A run killed with ``kill -9`` in the middle of a tool call: the settled steps are on
disk whole, the transcript verifies, and the next process goes on from them (R7, R28)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("agents")

from agents import Agent, Runner

from segue.integrations.openai_agents import RolloverSession
from tests.integrations.agents_fakes import ScriptedModel, say
from tests.integrations.helpers import DETAIL, ROOT, env, run_segue

WS = "sdk-crash"

_CHILD = """
import asyncio, sys
from agents import Agent, Runner, function_tool
from segue.integrations.openai_agents import RolloverSession
from tests.integrations.agents_fakes import ScriptedModel, call
from tests.integrations.helpers import chunk

@function_tool
def read_chunk(n: int) -> str:
    \"\"\"Read chunk n.\"\"\"
    return chunk(n)

@function_tool
def deploy() -> str:
    \"\"\"Deploy (never returns here: the parent kills this process).\"\"\"
    print("INSIDE", flush=True)
    sys.stdin.read()
    return "deployed"

s = RolloverSession(sys.argv[1], model="openai:gpt-4o", context_window=4000)
model = ScriptedModel([lambda _: call("read_chunk", {"n": 0}), lambda _: call("deploy", {})])
agent = Agent(name="a", model=model, tools=[read_chunk, deploy, *s.tools()])
asyncio.run(Runner.run(agent, "read, then deploy", session=s, run_config=s.run_config()))
"""


def test_kill_9_inside_a_tool_keeps_the_settled_steps(segue_home: Path) -> None:
    with subprocess.Popen(
        [sys.executable, "-c", _CHILD, WS],
        env={**env(segue_home), "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"},
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as proc:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "INSIDE"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)

    s = RolloverSession(WS, model="openai:gpt-4o", context_window=4000)
    items = asyncio.run(s.get_items())
    kinds = [i.get("type", i.get("role")) for i in items]
    assert kinds == ["user", "function_call", "function_call_output"]  # step 2 never settled
    assert DETAIL in items[-1]["output"]
    verify = run_segue(segue_home, WS, "history", "verify")
    assert verify.returncode == 0, verify.stdout + verify.stderr

    model = ScriptedModel([lambda _: say("done")])
    agent = Agent(name="a", model=model, tools=[*s.tools()])
    asyncio.run(
        Runner.run(agent, "status?", session=s, run_config=s.run_config(tracing_disabled=True))
    )
    sent = json.dumps(model.inputs[0])
    assert DETAIL in sent and "status?" in sent and '"name": "deploy"' not in sent
