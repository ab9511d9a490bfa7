"""R40 in the library: a reply that is still streaming stops when the caller leaves
``Session.stream()`` or calls ``cancel()``, against a real OpenAI-compatible HTTP server
whose reply never ends on its own (tests/slow_server.py). The text received so far is the
reply, marked ``partial``; a tool call that had not finished streaming never runs; the next
message goes out as usual."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("openai")

import segue
from tests.api.helpers import rows
from tests.slow_server import SlowServer, loopback_allowed

WORDS = ["alpha", "beta", "gamma", "delta"]


@pytest.fixture
def server() -> Iterator[SlowServer]:
    srv = SlowServer(WORDS)
    with loopback_allowed():
        yield srv
    srv.close()


def _session(tmp_path: Path, server: SlowServer, **kw: object) -> segue.Session:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return segue.open_session(
        "ws", home=tmp_path / "home", workdir=work, model="openai-compatible:slow",
        settings={"openai-compatible.baseUrl": server.base_url,
                  "contextWindow.openai-compatible:slow": 32000,
                  "encoding.openai-compatible:slow": "o200k_base"}, approve="full",
        **kw)  # type: ignore[arg-type]


def _assistant_rows(home: Path) -> list[segue.Row]:
    return [r for r in rows(home, "ws") if r.role == "assistant"]


def _streamed(events: list[segue.Event]) -> str:
    return "".join(e.text for e in events if isinstance(e, segue.AssistantText))


def _cancel_when_stalled(server: SlowServer, turn: segue.TurnStream) -> None:
    server.stalled.wait(30)
    turn.cancel()


def test_breaking_out_of_a_streaming_reply_keeps_what_arrived(
        tmp_path: Path, server: SlowServer) -> None:
    seen: list[segue.Event] = []
    with _session(tmp_path, server) as session:
        turn = session.stream("tell me")
        for event in turn:
            seen.append(event)
            if _streamed(seen).split() == WORDS[:2]:
                break  # the server is still sending: the reply has two more words and no end
        assert turn.result.status == "paused"
        assert "interrupted" in (turn.result.reason or "")
        assert turn.result.text == "alpha beta "
    (reply,) = _assistant_rows(tmp_path / "home")
    assert reply.text == "alpha beta "
    assert reply.metadata.get("partial") is True


def test_cancel_stops_a_reply_that_stalls(tmp_path: Path, server: SlowServer) -> None:
    """The server sends every word and then nothing at all: only a cancel ends the turn."""
    with _session(tmp_path, server) as session:
        turn = session.stream("tell me")
        seen: list[segue.Event] = []
        stopper = threading.Thread(target=_cancel_when_stalled, args=(server, turn))
        stopper.start()
        seen.extend(turn)  # the loop ends by itself once the cancel lands
        stopper.join()
        assert server.stalled.is_set()
        assert turn.result.status == "paused"
        assert _streamed(seen) == "alpha beta gamma delta "
    (reply,) = _assistant_rows(tmp_path / "home")
    assert reply.text == "alpha beta gamma delta " and reply.metadata.get("partial") is True


def test_a_call_still_streaming_never_runs_and_the_next_message_goes_out(
        tmp_path: Path) -> None:
    server = SlowServer(["running", "it"], tool_call="bash")
    try:
        with loopback_allowed(), _session(tmp_path, server) as session:
            turn = session.stream("touch a file")
            stopper = threading.Thread(target=_cancel_when_stalled, args=(server, turn))
            stopper.start()
            kinds = [type(e).__name__ for e in turn]
            stopper.join()
            assert "ToolStarted" not in kinds
            assert turn.result.status == "paused"
            parts = [p for r in _assistant_rows(tmp_path / "home") for p in r.parts]
            assert [p.type for p in parts] == ["text"]  # no call stored, none run
            # The workspace is ready for the next message: it carries the stopped reply.
            server.stall = False
            server.tool_call = None
            assert session.send("again").status == "completed"
        messages = server.requests[-1]["messages"]
        assert [m["role"] for m in messages[-3:]] == ["user", "assistant", "user"]
        assert messages[-2]["content"].strip() == "running it"
    finally:
        server.close()


def test_cancel_in_an_async_for_stops_the_reply(tmp_path: Path, server: SlowServer) -> None:
    async def main() -> segue.TurnResult:
        with _session(tmp_path, server) as session:
            turn = session.stream("tell me")
            async for event in turn:
                if isinstance(event, segue.AssistantText):
                    turn.cancel()  # the loop then ends on its own, with nothing more streamed
            return turn.result

    result = asyncio.run(main())
    assert result.status == "paused" and result.text == "alpha "
