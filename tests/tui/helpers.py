"""Driving :class:`segue._tui.app.ChatApp` headless with a pilot, over the line chat's test
harness (a real store and the scripted provider in a temporary SEGUE_HOME)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from textual.app import App
from textual.pilot import Pilot

from segue._render.lines import Line
from segue._tui.app import ChatApp
from segue._tui.widgets import PromptArea
from tests.chat.helpers import Chat

SIZE = (110, 40)


async def until(pilot: Pilot[int], ready: Callable[[], bool], timeout: float = 15.0) -> None:
    """Let the app run until ``ready()`` holds (a condition, never a fixed wait)."""
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            shown = "\n".join(f"{line.kind}: {line.text[:120]}" for line in lines(pilot.app))
            raise AssertionError(f"the app never reached the expected state; it shows:\n{shown}")
        await pilot.pause(0.01)


async def submit(pilot: Pilot[int], text: str) -> None:
    pilot.app.query_one("#prompt", PromptArea).value = text
    await pilot.press("enter")


def lines(app: App[int]) -> list[Line]:
    assert isinstance(app, ChatApp)
    return app.transcript.lines()


def shows(app: ChatApp, kind: str, text: str) -> bool:
    """Some entry of this kind contains ``text``."""
    return any(line.kind == kind and text in line.text for line in lines(app))


async def at_prompt(pilot: Pilot[int], app: ChatApp, count: int) -> None:
    """Wait until the loop has asked for its ``count``-th line (the previous one is done)."""
    await until(pilot, lambda: app.prompts >= count)


def run_app(
    c: Chat, scenario: Callable[[ChatApp, Pilot[int]], Awaitable[None]],
    *, agent_name: str | None = None,
) -> ChatApp:
    import asyncio

    app = ChatApp(c.source(), agent_name=agent_name)

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await scenario(app, pilot)

    asyncio.run(main())
    return app


