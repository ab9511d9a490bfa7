"""``segue chat --tui`` driven headless with a pilot: the scripted provider, a real store."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from segue import HistoryStore
from segue._render.lines import Line
from segue._tui.app import ChatApp
from segue._tui.widgets import Question
from tests.chat.helpers import chat, texts
from tests.chat.request_gate import RequestGate
from tests.chat.scripts import check_interrupted_turn, write_interrupted_turn
from tests.tui.helpers import at_prompt, lines, run_app, shows, submit, until


def _reply(tag: str, words: int) -> dict[str, Any]:
    return {"text": " ".join(f"{tag.lower()}{i % 10}" for i in range(words)) + f" {tag}"}


def test_a_message_streams_its_reply_and_the_status_shows_meter_agent_and_model(
    tmp_path: Path,
) -> None:
    c = chat(tmp_path, [{"text": "Hello from the model"}])
    c.settings(experiments={"tokenBudget": True})

    async def scenario(app: ChatApp, pilot: Pilot[int]) -> None:
        await at_prompt(pilot, app, 1)
        assert shows(app, "segue", "[segue] segue chat · workspace ws")
        await submit(pilot, "hi there")
        await at_prompt(pilot, app, 2)
        assert Line("user", "hi there") in lines(app)
        assert Line("assistant", "Hello from the model") in lines(app)
        status = app.status_text
        assert "% · rolls over by 75% · agent exec · model scripted:" in status

    run_app(c, scenario)
    assert texts(c.rows()) == ["hi there", "Hello from the model"]


def test_history_so_far_is_shown_and_a_rollover_shows_its_divider(tmp_path: Path) -> None:
    # Each long reply takes about 36% of the window: two reach the threshold, so the third
    # message rolls over (the same calibration as the line chat's terminal test).
    c = chat(
        tmp_path,
        [_reply("REPLY-ONE", 2400), _reply("REPLY-TWO", 2400), _reply("REPLY-THREE", 40)],
        context_window=20000,
    )
    c.settings(experiments={"tokenBudget": True})

    async def first(app: ChatApp, pilot: Pilot[int]) -> None:
        await at_prompt(pilot, app, 1)
        await submit(pilot, "first message")
        await at_prompt(pilot, app, 2)

    run_app(c, first)

    async def second(app: ChatApp, pilot: Pilot[int]) -> None:
        await at_prompt(pilot, app, 1)
        # The earlier conversation, from the store, before anything new.
        assert shows(app, "user", "first message")
        assert shows(app, "assistant", "REPLY-ONE")
        await submit(pilot, "second message")
        await at_prompt(pilot, app, 2)
        await submit(pilot, "third message")
        await at_prompt(pilot, app, 3)
        shown = lines(app)
        divider = shown.index(Line("divider", "Context window rollover"))
        assert shown[divider + 1].kind == "segue"
        assert shown[divider + 1].text.startswith("[segue] w:0 → w:")
        assert shows(app, "assistant", "REPLY-THREE")
        # The lead-in the rollover wrote is machinery: never shown as anyone's words.
        assert all(line.kind != "user" or "message" in line.text for line in shown)

    run_app(c, second)

    async def third(app: ChatApp, pilot: Pilot[int]) -> None:
        await at_prompt(pilot, app, 1)
        assert Line("divider", "Context window rollover") in lines(app)

    run_app(c, third)


def test_soft_clear_appends_a_reset(tmp_path: Path) -> None:
    c = chat(tmp_path, [{"text": "before"}])

    async def scenario(app: ChatApp, pilot: Pilot[int]) -> None:
        await at_prompt(pilot, app, 1)
        await submit(pilot, "hi")
        await at_prompt(pilot, app, 2)
        await submit(pilot, "/clear --soft")
        await at_prompt(pilot, app, 3)
        assert Line("divider", "Context cleared") in lines(app)
        assert shows(app, "segue", "the next message starts a fresh context window")

    run_app(c, scenario)
    rows = c.rows()
    assert rows[-1].metadata.get("contextBoundaryKind") == "reset"
    assert texts(rows[:2]) == ["hi", "before"]


def test_hard_clear_asks_with_a_dialog(tmp_path: Path) -> None:
    c = chat(tmp_path, [{"text": "kept"}])

    async def scenario(app: ChatApp, pilot: Pilot[int]) -> None:
        await at_prompt(pilot, app, 1)
        await submit(pilot, "hi")
        await at_prompt(pilot, app, 2)
        await submit(pilot, "/clear")
        await until(pilot, lambda: isinstance(app.screen, Question))
        assert isinstance(app.screen, Question)
        assert "cannot be undone" in app.screen.context
        await pilot.press("n")
        await at_prompt(pilot, app, 3)
        assert shows(app, "segue", "[segue] not cleared")
        await submit(pilot, "/clear")
        await until(pilot, lambda: isinstance(app.screen, Question))
        await pilot.click("#yes")
        await at_prompt(pilot, app, 4)
        assert shows(app, "segue", "[segue] transcript destroyed")

    run_app(c, scenario)
    assert c.rows() == []


def test_agent_switch_and_help_and_exit(tmp_path: Path) -> None:
    c = chat(tmp_path, [{"text": "from plan"}])

    async def scenario(app: ChatApp, pilot: Pilot[int]) -> None:
        await at_prompt(pilot, app, 1)
        assert "agent exec" in app.status_text
        await submit(pilot, "/agent plan")
        await at_prompt(pilot, app, 2)
        assert "agent plan ·" in app.status_text
        assert shows(app, "segue", "[segue] agent plan · model scripted:")
        await submit(pilot, "/help")
        await at_prompt(pilot, app, 3)
        assert shows(app, "segue", "/clear --soft")
        await submit(pilot, "go")
        await at_prompt(pilot, app, 4)
        await submit(pilot, "/exit")
        await until(pilot, lambda: app.return_value == 0)

    app = run_app(c, scenario)
    assert app.return_value == 0
    assert [r.metadata.get("agentId") for r in c.rows() if r.role == "assistant"] == ["plan"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="the request gate is a FIFO")
def test_escape_during_a_turn_cancels_it_and_keeps_the_settled_steps(tmp_path: Path) -> None:
    c = chat(tmp_path, [])
    gate = RequestGate(tmp_path / "requests.fifo")
    write_interrupted_turn(c.script, gate.path)

    async def scenario(app: ChatApp, pilot: Pilot[int]) -> None:
        try:
            await held_turn(app, pilot)
        finally:
            # Never leave a step held at the gate: the app could not end until it returns.
            gate.open_wide()

    async def held_turn(app: ChatApp, pilot: Pilot[int]) -> None:
        await at_prompt(pilot, app, 1)
        await submit(pilot, "go")
        await submit(pilot, "carry on")  # typed ahead: step 1 is still held at the gate
        await until(pilot, lambda: shows(app, "segue", "[segue] queued: runs when the current"))
        gate.allow_one()
        # Step 1 settled (its tool result is shown); step 2, if it started, is held.
        await until(pilot, lambda: any(line.text.startswith("    → ") for line in lines(app)))
        await pilot.press("escape")
        await until(pilot, lambda: shows(app, "segue", "interrupting: stopping the turn"))
        gate.open_wide()  # the step in flight (if any) returns; the turn stops after it
        await at_prompt(pilot, app, 3)
        shown = lines(app)
        stopped = shown.index(
            Line("segue", "[segue] turn interrupted; the steps that settled are kept")
        )
        assert shown.index(Line("user", "carry on")) > stopped
        assert shows(app, "assistant", "FOLLOW-UP")

    run_app(c, scenario)
    store = HistoryStore(c.layout, durable=False)
    assert store.verify().ok
    rows = list(store.rows())
    check_interrupted_turn(rows)
