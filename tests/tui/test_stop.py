"""R40 in the full-screen chat, with Textual's pilot, against a local OpenAI-compatible server
whose reply never ends on its own (tests/slow_server.py): Esc (and Ctrl-C) stop the reply while
it streams; the status line says the model is replying, not thinking; a line typed ahead and
the "interrupting" note do not cut the reply into two entries."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("openai")

from textual.pilot import Pilot

from segue import HistoryStore
from segue._chat import SessionMaker
from segue._tui.app import ChatApp
from tests.chat.helpers import Chat, Source, chat
from tests.slow_server import SlowServer, serving
from tests.tui.helpers import SIZE, at_prompt, lines, shows, submit, until

MODEL = "openai-compatible:slow"
WORDS = ["north", "east", "south", "west"]


@pytest.fixture
def server() -> Iterator[SlowServer]:
    with serving(WORDS) as srv:
        yield srv


def _chat(tmp_path: Path, server: SlowServer) -> Chat:
    c = chat(tmp_path, [])
    c.layout.home.mkdir(parents=True, exist_ok=True)
    (c.layout.home / "settings.json").write_text(json.dumps({
        "openai-compatible": {"baseUrl": server.base_url},
        "contextWindow": {MODEL: 32000},
        "encoding": {MODEL: "o200k_base"},
    }))
    return c


def _run(c: Chat, key: str, server: SlowServer) -> ChatApp:
    import asyncio

    app = ChatApp(Source(SessionMaker(c.layout, c.tmp / "work", MODEL, False)))

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await scenario(app, pilot)

    async def scenario(app: ChatApp, pilot: Pilot[int]) -> None:
        await at_prompt(pilot, app, 1)
        await submit(pilot, "which way")
        await until(pilot, lambda: shows(app, "assistant", "north east"))
        assert "● replying" in app.status_text  # text is streaming: not "thinking"
        await submit(pilot, "typed ahead")  # queued while the reply streams
        await until(pilot, server.stalled.is_set)
        await until(pilot, lambda: shows(app, "assistant", "north east south west"))
        server.stall = False  # what comes next ends as usual
        await pilot.press(key)
        # The queued line goes out next, in the same workspace, once the reply has stopped.
        await at_prompt(pilot, app, 3)
        shown = [(line.kind, line.text) for line in lines(app)]
        first = shown[: shown.index(("user", "typed ahead"))]
        replies = [text for kind, text in first if kind == "assistant"]
        assert replies == ["north east south west "]  # one entry, never cut in two
        reply = first.index(("assistant", replies[0]))
        notes = [text for kind, text in first[reply + 1 :] if kind == "segue"]
        assert notes == [
            "[segue] queued: runs when the current one is done",
            "[segue] interrupting: stopping the turn",
            "[segue] interrupted: the reply was stopped; the text received so far is kept",
        ]
        await pilot.press("ctrl+d")

    asyncio.run(main())
    return app


@pytest.mark.parametrize("key", ["escape", "ctrl+c"])
def test_a_key_stops_the_streaming_reply(tmp_path: Path, server: SlowServer, key: str) -> None:
    c = _chat(tmp_path, server)
    _run(c, key, server)
    rows = list(HistoryStore(c.layout, durable=False).rows())
    replies = [(r.text, r.metadata.get("partial")) for r in rows if r.role == "assistant"]
    assert replies[0] == ("north east south west ", True)
    assert [r.text for r in rows if r.role == "user"] == ["which way", "typed ahead"]
