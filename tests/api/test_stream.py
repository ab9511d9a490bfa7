"""``Session.stream``: a turn's events as they happen (sync and async), its result at the
end; leaving early stops the turn at its next safe point, deterministically."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import segue
from segue._errors import UsageError
from tests.api.helpers import bash, rows, script


def _session(tmp_path: Path, *responses: dict[str, object], **kw: object) -> segue.Session:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    model = script(tmp_path / "s.json", *responses)
    return segue.open_session("ws", home=tmp_path / "home", workdir=work, model=model,
                              approve="full", **kw)  # type: ignore[arg-type]


def test_events_in_order_then_the_result(tmp_path: Path) -> None:
    seen: list[segue.Event] = []
    with _session(tmp_path, bash("echo hi", "Looking."), {"text": "All done."},
                  on_event=seen.append) as session:
        turn = session.stream("go")
        with pytest.raises(UsageError, match="has not ended"):
            turn.result  # noqa: B018 - the property raises before the end
        events = list(turn)
    kinds = [type(e).__name__ for e in events]
    assert kinds == ["AssistantText", "ToolStarted", "ToolFinished", "StepUsage",
                     "AssistantText", "StepUsage"]
    started, finished = events[1], events[2]
    assert isinstance(started, segue.ToolStarted) and started.input == {"command": "echo hi"}
    assert isinstance(finished, segue.ToolFinished) and finished.output["exitCode"] == 0
    assert turn.result.status == "completed" and turn.result.text == "All done."
    assert seen == events  # the session's own sink saw the very same events


def test_breaking_out_stops_the_turn_after_that_event(tmp_path: Path) -> None:
    work = tmp_path / "work"
    with _session(tmp_path, bash("touch first"), bash("touch second"),
                  {"text": "never"}) as session:
        turn = session.stream("go")
        for event in turn:
            if isinstance(event, segue.ToolFinished):
                break
        # The loop has been left: the turn reached its safe point and stopped there.
        assert turn.result.status == "paused"
        assert "cancelled" in (turn.result.reason or "")
        assert (work / "first").exists() and not (work / "second").exists()
        # The settled step is durable: its call and result are in the transcript.
        outputs = [p.output for r in rows(tmp_path / "home", "ws") for p in r.parts
                   if p.toolName == "bash"]
        assert len(outputs) == 1 and outputs[0]["exitCode"] == 0
        # The session goes on with the next response of the script.
        assert session.send("and now?").status == "completed"
        assert (work / "second").exists()


def test_wait_and_one_stream_at_a_time(tmp_path: Path) -> None:
    with _session(tmp_path, bash("sleep 0.2", "Waiting."), {"text": "ok"},
                  {"text": "second"}) as session:
        turn = session.stream("go")
        events = iter(turn)
        next(events)  # the turn runs now, and waits for us (lock-step)
        with pytest.raises(UsageError, match="already streaming"):
            next(iter(session.stream("meanwhile")))
        for call in (lambda: session.send("meanwhile"), session.compact, session.clear_soft):
            with pytest.raises(UsageError, match="a turn is streaming on this session"):
                call()
        for _ in events:
            pass
        assert turn.result.text == "ok"
        with pytest.raises(UsageError, match="iterated once"):
            next(iter(turn))
        assert session.stream("again").wait().text == "second"


def test_an_error_of_the_send_is_raised_in_the_loop(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    with _session(tmp_path, {"text": "unused"}) as session:
        def broken(*_args: object, **_kw: object) -> None:
            raise segue.RuntimeFailure("the disk went away")

        monkeypatch.setattr(session.store, "append", broken)
        with pytest.raises(segue.RuntimeFailure, match="the disk went away"):
            for _ in session.stream("hello"):
                pass


def test_async_for_and_asend(tmp_path: Path) -> None:
    async def main() -> tuple[list[str], segue.TurnResult, segue.TurnResult]:
        with _session(tmp_path, {"text": "streamed"}, {"text": "sent"}) as session:
            turn = session.stream("one")
            texts = [e.text async for e in turn if isinstance(e, segue.AssistantText)]
            return texts, turn.result, await session.asend("two")

    texts, streamed, sent = asyncio.run(main())
    assert "".join(texts) == "streamed" and streamed.text == "streamed"
    assert sent.text == "sent"


def test_cancelling_the_awaiting_task_stops_the_turn(tmp_path: Path) -> None:
    work = tmp_path / "work"

    async def main() -> segue.TurnStream:
        with _session(tmp_path, bash("touch first"), bash("touch second"),
                      {"text": "never"}) as session:
            turn = session.stream("go")
            reached = asyncio.Event()

            async def consume() -> None:
                async for event in turn:
                    if isinstance(event, segue.ToolFinished):
                        reached.set()
                        await asyncio.Event().wait()  # blocks until cancelled

            task = asyncio.create_task(consume())
            await reached.wait()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            return turn

    turn = asyncio.run(main())
    assert turn.result.status == "paused"
    assert (work / "first").exists() and not (work / "second").exists()
