"""The full-screen chat as it is lived in: the status line is visible at 80×24, the input is
multi-line (a paste stays whole, Ctrl+J inserts a newline, Enter sends), text typed ahead is
kept, and a tool that changes the machine asks in a dialog (R38). How these screens look is
pinned by the SVG baselines in test_snapshots.py."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from textual import events
from textual.containers import Vertical
from textual.pilot import Pilot
from textual.widgets import Label, Static

from segue import Answer
from segue._policy.approval_store import approvals_path
from segue._tui.app import ChatApp
from segue._tui.widgets import ApprovalDialog, PromptArea, Question
from tests.chat.helpers import Chat, chat
from tests.tui.helpers import at_prompt, shows, until


def _run(c: Chat, scenario: Callable[[ChatApp, Pilot[int]], Awaitable[None]],
         size: tuple[int, int] = (80, 24)) -> ChatApp:
    app = ChatApp(c.source())

    async def main() -> None:
        async with app.run_test(size=size) as pilot:
            await scenario(app, pilot)

    asyncio.run(main())
    return app


def _bash(command: str) -> dict[str, Any]:
    return {"text": "", "toolCalls": [{"name": "bash", "input": {"command": command}}]}


def test_the_status_line_is_visible_above_the_input_at_80x24(tmp_path: Path) -> None:
    c = chat(tmp_path, [{"text": "hello"}])

    async def scenario(app: ChatApp, pilot: Pilot[int]) -> None:
        await at_prompt(pilot, app, 1)
        await until(pilot, lambda: "agent exec" in app.status_text)
        status = app.query_one("#status", Static).region
        prompt = app.query_one("#prompt", PromptArea).region
        assert status.height == 1 and status.width > 0
        assert status.bottom <= prompt.y  # above the input, not under it
        assert prompt.bottom <= 24
        assert "% · compacts by 75% · agent exec · model scripted:" in app.status_text

    _run(c, scenario)


def test_a_paste_stays_whole_and_ctrl_j_adds_a_line_then_enter_sends_it(tmp_path: Path) -> None:
    c = chat(tmp_path, [{"text": "GOT IT"}, {"text": "NEVER"}])

    async def scenario(app: ChatApp, pilot: Pilot[int]) -> None:
        await at_prompt(pilot, app, 1)
        area = app.query_one("#prompt", PromptArea)
        app.post_message(events.Paste("line one\nline two\nline three"))  # as a terminal does
        await pilot.pause()
        await pilot.press("ctrl+j", "4")
        assert area.text == "line one\nline two\nline three\n4"
        assert app.prompts == 1  # nothing was sent by the paste or the newline
        await pilot.press("enter")
        await at_prompt(pilot, app, 2)
        assert area.text == ""

    _run(c, scenario)
    users = [r.text for r in c.rows() if r.role == "user"]
    assert users == ["line one\nline two\nline three\n4"]


def test_text_typed_during_a_turn_is_kept_and_runs_next(tmp_path: Path) -> None:
    c = chat(tmp_path, [_bash("true"), {"text": "FIRST DONE"}, {"text": "SECOND DONE"}])

    async def scenario(app: ChatApp, pilot: Pilot[int]) -> None:
        await at_prompt(pilot, app, 1)
        area = app.query_one("#prompt", PromptArea)
        area.value = "first"
        await pilot.press("enter")
        await until(pilot, lambda: len(app.screen_stack) > 1)  # the approval dialog is up
        assert "● waiting for your answer" in app.status_text  # the working indicator
        area.value = "typed ahead"  # kept in the input while the dialog asks
        app.screen.dismiss(Answer.YES)
        await until(pilot, lambda: shows(app, "assistant", "FIRST DONE"))
        await pilot.press("enter")
        await until(pilot, lambda: shows(app, "assistant", "SECOND DONE"))

    _run(c, scenario)
    assert [r.text for r in c.rows() if r.role == "user"] == ["first", "typed ahead"]


def test_the_approval_dialog_shows_the_command_and_always_remembers_it(tmp_path: Path) -> None:
    c = chat(tmp_path, [_bash("ls -a"), {"text": "ONE"}, _bash("ls -a"), {"text": "TWO"},
                        _bash("rm -rf build"), {"text": "THREE"}])
    work = tmp_path / "work"
    (work / "build").mkdir()

    async def scenario(app: ChatApp, pilot: Pilot[int]) -> None:
        await at_prompt(pilot, app, 1)
        app.query_one("#prompt", PromptArea).value = "list"
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ApprovalDialog))
        shown = [str(s.content) for s in app.screen.query(Static)]
        assert "ls -a" in shown  # the exact command
        await pilot.press("a")
        await until(pilot, lambda: shows(app, "assistant", "ONE"))
        await at_prompt(pilot, app, 2)
        app.query_one("#prompt", PromptArea).value = "list long"
        await pilot.press("enter")
        await until(pilot, lambda: shows(app, "assistant", "TWO"))  # no dialog: the rule holds
        await at_prompt(pilot, app, 3)
        app.query_one("#prompt", PromptArea).value = "clean"
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ApprovalDialog))
        await pilot.press("escape")  # no
        await until(pilot, lambda: shows(app, "assistant", "THREE"))

    _run(c, scenario, size=(110, 40))
    assert (work / "build").is_dir()
    outputs = [p.output for r in c.rows() for p in r.parts if p.type == "dynamic-tool"]
    assert [o.get("ok", True) for o in outputs] == [True, True, False]
    assert outputs[2]["error"]["code"] == "approval_denied"
    rules = json.loads(approvals_path(c.layout).read_text())["rules"]
    assert [r["action"] for r in rules] == ["allow"]


def test_a_reply_is_rendered_as_markdown(tmp_path: Path) -> None:
    reply = "Use **care** here:\n\n- first point\n- second point\n\n```\nx = 1\n```"
    c = chat(tmp_path, [{"text": reply}])

    async def scenario(app: ChatApp, pilot: Pilot[int]) -> None:
        await at_prompt(pilot, app, 1)
        app.query_one("#prompt", PromptArea).value = "advise"
        await pilot.press("enter")
        await at_prompt(pilot, app, 2)
        screen = app.export_screenshot().replace("&#160;", " ")
        assert "care" in screen and "**care**" not in screen  # emphasis, not asterisks
        assert "•" in screen and "first point" in screen  # a list item
        assert "```" not in screen and "x = 1" in screen  # a code block

    _run(c, scenario, size=(110, 40))


def test_the_clear_dialog_fits_its_text_at_80x24(tmp_path: Path) -> None:
    c = chat(tmp_path, [{"text": "hello"}])

    async def scenario(app: ChatApp, pilot: Pilot[int]) -> None:
        await at_prompt(pilot, app, 1)
        app.query_one("#prompt", PromptArea).value = "/clear"
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, Question))
        await pilot.pause()
        box = app.screen.query_one(Vertical).region
        assert box.x >= 0 and box.right <= 80 and box.bottom <= 24
        for label in app.screen.query(Label):
            text = str(label.content)
            # Every character of the warning is inside the box: wrapped, never cut off.
            assert label.region.width * label.region.height >= len(text), text
            assert label.region.right <= box.right
        await pilot.press("n")

    _run(c, scenario)
