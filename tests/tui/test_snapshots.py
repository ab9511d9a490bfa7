"""Screens of the full-screen chat at 80×24, compared with the SVG baselines stored in
``tests/tui/snapshots/`` (``SEGUE_SNAPSHOT_UPDATE=1`` remakes them; see tests/tui/snapshot.py).

Each screen is made deterministic: a fixed size, a clock that moves only when the test moves
it, the script named by a relative path (no temporary directory on screen), the scripted
provider, tool results read from a stored transcript (a live command's duration varies), the
default theme and colours, and a cursor that does not blink.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from segue import HistoryStore, Part, make_row
from segue._chat import SessionMaker
from segue._tui.app import ChatApp
from segue._tui.widgets import ApprovalDialog, PromptArea, Question
from tests.chat.helpers import Chat, Source, chat
from tests.tui.helpers import at_prompt, shows, submit, until
from tests.tui.snapshot import SNAPSHOTS, assert_snapshot, screen_text

SIZE = (80, 24)

REPLY = (
    "The lock file pins **two** versions of `click`. To fix it:\n\n"
    "- drop the older pin\n"
    "- run the tests again\n\n"
    "```\npip install 'click>=8.1'\n```"
)


@pytest.fixture(autouse=True)
def _plain_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The screens as drawn by default: NO_COLOR would draw them in grey."""
    monkeypatch.delenv("NO_COLOR", raising=False)


class Clock:
    """A monotonic clock that moves only when told to."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _run(
    c: Chat, scenario: Callable[[ChatApp, Pilot[int]], Awaitable[None]], clock: Clock
) -> None:
    # Relative to the working directory: the model's name on screen has no temporary path.
    maker = SessionMaker(c.layout, c.tmp / "work", "scripted:../script.json", False)
    app = ChatApp(Source(maker), clock=clock)

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await at_prompt(pilot, app, 1)
            app.theme = "textual-dark"  # the default, whatever TEXTUAL_THEME says
            app.query_one("#prompt", PromptArea).cursor_blink = False
            await scenario(app, pilot)

    asyncio.run(main())


async def _screen(pilot: Pilot[int]) -> str:
    """The screen once everything scheduled has been drawn."""
    await pilot.pause()
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()
    return pilot.app.export_screenshot()


def test_a_conversation_with_a_markdown_reply(tmp_path: Path) -> None:
    c = chat(tmp_path, [{"text": REPLY}])

    async def scenario(app: ChatApp, pilot: Pilot[int]) -> None:
        await submit(pilot, "why do the tests fail?")
        await at_prompt(pilot, app, 2)
        assert_snapshot("conversation", await _screen(pilot), tmp_path)

    _run(c, scenario, Clock())


def _tool(call: str, command: str, output: dict[str, Any]) -> Part:
    return Part(type="dynamic-tool", toolCallId=call, toolName="bash",
                input={"command": command}, state="output-available", output=output)


def test_tool_results_read_as_an_excerpt_and_an_interrupted_command_says_so(
    tmp_path: Path,
) -> None:
    c = chat(tmp_path, [])
    failing = "\n".join(
        [f"tests/test_{n}.py ." for n in ("cli", "io", "pin")]
        + ["FAILED tests/test_pin.py::test_pin - assert 2 == 1", "", "1 failed, 3 passed",
           "make: *** [test] Error 1", "exit status 2"]
    )
    HistoryStore(c.layout).append([
        make_row("user", "run the tests", id="u1"),
        make_row("assistant", id="a1", parts=[
            _tool("c1", "make test", {"ok": True, "exitCode": 2, "output": failing + "\n",
                                      "durationMs": 2340}),
        ]),
        make_row("assistant", id="a2", parts=[
            _tool("c2", "sleep 600", {"ok": False, "exitCode": None, "output": "",
                                      "durationMs": 4100,
                                      "error": {"code": "interrupted", "message": "killed"}}),
        ]),
        make_row("assistant", "One test fails: `test_pin`.", id="a3"),
    ])

    async def scenario(app: ChatApp, pilot: Pilot[int]) -> None:
        assert shows(app, "tool", "interrupted")
        assert_snapshot("tool-results", await _screen(pilot), tmp_path)

    _run(c, scenario, Clock())


def test_the_approval_dialog_with_the_working_indicator(tmp_path: Path) -> None:
    c = chat(tmp_path, [
        {"text": "", "toolCalls": [{"name": "bash", "input": {"command": "rm -rf build"}}]},
        {"text": "Left it alone."},
    ])
    clock = Clock()

    async def scenario(app: ChatApp, pilot: Pilot[int]) -> None:
        await submit(pilot, "clean up")
        await until(pilot, lambda: isinstance(app.screen, ApprovalDialog))
        clock.now += 12
        await until(pilot, lambda: "● waiting for your answer 12s" in app.status_text)
        assert_snapshot("approval", await _screen(pilot), tmp_path)
        await pilot.press("n")
        await at_prompt(pilot, app, 2)

    _run(c, scenario, clock)


def test_the_clear_dialog(tmp_path: Path) -> None:
    c = chat(tmp_path, [])

    async def scenario(app: ChatApp, pilot: Pilot[int]) -> None:
        await submit(pilot, "/clear")
        await until(pilot, lambda: isinstance(app.screen, Question))
        assert_snapshot("clear", await _screen(pilot), tmp_path)
        await pilot.press("n")
        await at_prompt(pilot, app, 2)

    _run(c, scenario, Clock())


# -- the comparison itself ---------------------------------------------------------------------


def test_a_new_render_id_matches_and_a_changed_screen_fails(tmp_path: Path) -> None:
    stored = (SNAPSHOTS / "conversation.svg").read_text(encoding="utf-8")
    assert 'class="terminal-matrix"' in stored  # stored normalised
    base = tmp_path / "baselines"
    assert_snapshot("screen", stored.replace("terminal-", "terminal-42-"), tmp_path,
                    baselines=base, update=True)
    assert (base / "screen.svg").read_text(encoding="utf-8") == stored

    def check(svg: str) -> None:
        assert_snapshot("screen", svg, tmp_path, baselines=base, update=False)

    check(stored.replace("terminal-", "terminal-987654-"))  # another render's id: a match
    assert any("pins" in row for row in screen_text(stored))
    changed = stored.replace("pins", "pons", 1)
    with pytest.raises(pytest.fail.Exception, match=r"(?s)differs from.*\n-.*pins.*\n\+.*pons"):
        check(changed)
    assert (tmp_path / "screen.svg").read_text(encoding="utf-8") == changed
    recoloured = re.sub(r"fill: #[0-9a-f]{6}", "fill: #123456", stored, count=1)
    assert recoloured != stored
    with pytest.raises(pytest.fail.Exception, match="colours or styles differ"):
        check(recoloured)
    with pytest.raises(pytest.fail.Exception, match="no baseline"):
        assert_snapshot("missing", stored, tmp_path, baselines=base, update=False)
