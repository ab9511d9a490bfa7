"""The integrations write to the store the user configured (SPEC §8, §9): the ``store.url``
setting of their home, or a ``store=`` URL — PostgreSQL included — read back by ``segue``."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integrations.helpers import env
from tests.postgres.cluster import pg_url

__all__ = ["pg_url"]


def _segue(home: Path, *args: str) -> str:
    # A separate process, as a user runs it: its store connections are its own.
    out = subprocess.run([sys.executable, "-m", "segue", "--home", str(home), *args],
                         capture_output=True, text=True, env=env(home), timeout=120,
                         check=False)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_pydantic_ai_writes_to_the_configured_postgresql_store(
    pg_url: str, segue_home: Path
) -> None:
    pytest.importorskip("pydantic_ai")
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from segue.integrations.pydantic_ai import SegueHistory

    _segue(segue_home, "store", "init", pg_url)
    _segue(segue_home, "settings", "set", "store.url", pg_url)

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart("magenta answer")])

    history = SegueHistory("pyd-pg", model="openai:gpt-4o", context_window=100_000)
    agent = Agent(FunctionModel(model), capabilities=[history.capability()])
    assert asyncio.run(agent.run("hello there")).output == "magenta answer"
    history.close()
    assert not (segue_home / "sessions" / "pyd-pg" / "chat.jsonl").exists()
    shown = _segue(segue_home, "--store", pg_url, "-w", "pyd-pg", "history", "search", "magenta")
    assert "magenta answer" in shown
    found = json.loads(_segue(segue_home, "-w", "pyd-pg", "history", "tool",
                              '{"action": "search", "query": "hello there"}'))
    assert found["ok"] is True and len(found["items"]) == 1


def test_agents_sdk_session_takes_a_store_url(pg_url: str, segue_home: Path) -> None:
    pytest.importorskip("agents")
    from segue.integrations.openai_agents import SegueSession

    _segue(segue_home, "store", "init", pg_url)
    session = SegueSession("sdk-pg", store=pg_url)
    asyncio.run(session.add_items([{"role": "user", "content": "ochre question"}]))
    assert asyncio.run(session.get_items()) == [{"role": "user", "content": "ochre question"}]
    session.close()
    assert not (segue_home / "sessions" / "sdk-pg" / "chat.jsonl").exists()
    shown = _segue(segue_home, "--store", pg_url, "-w", "sdk-pg", "history", "search", "ochre")
    assert "ochre question" in shown
