"""segue in async code, offline: ``async for`` over a turn's events, an async approver
awaited on your own event loop, and ``await session.asend(...)``.

The turn runs in a worker thread, so the event loop stays free while the model and the
tools work; the approver below awaits (think: a web UI waiting for a click) on that loop.

    SEGUE_HOME=/tmp/segue-lib python examples/library_async.py

Exits 0 when the turn ran as shown, 1 otherwise.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path

import segue

WORKSPACE = "library-async"
RESPONSES = [
    {"text": "I will write the greeting.",
     "toolCalls": [{"name": "file_write", "input": {"path": "hello.txt", "content": "hi\n"}}]},
    {"text": "hello.txt is written."},
    {"text": "You are welcome."},
]


async def ask_the_user(request: segue.ApprovalRequest) -> bool:
    """An async approver: here it answers after a tick; a real one would await a person."""
    await asyncio.sleep(0)
    print(f"\n[asked] {request.tool}: {request.subject}")
    return True


async def main(home: Path, scratch: Path) -> int:
    script = scratch / "script.json"
    script.write_text(json.dumps(
        {"contextWindow": 16000, "encoding": "o200k_base", "responses": RESPONSES}))
    work = scratch / "work"
    work.mkdir()
    with segue.open_session(WORKSPACE, home=home, workdir=work, model=f"scripted:{script}",
                            approver=ask_the_user) as session:
        session.clear_hard()
        turn = session.stream("write hello.txt")
        async for event in turn:
            if isinstance(event, segue.AssistantText):
                print(event.text, end="", flush=True)
            elif isinstance(event, segue.ToolFinished):
                print(f"\n[tool] {event.name}: ok={event.output['ok']}")
        print(f"\n[turn] {turn.result.status}")
        thanks = await session.asend("thanks")
        print(f"[asend] {thanks.status}: {thanks.text}")
    ok = (turn.result.status == "completed" and (work / "hello.txt").read_text() == "hi\n"
          and thanks.text == "You are welcome.")
    return 0 if ok else 1


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="segue-example-") as tmp:
        given = os.environ.get("SEGUE_HOME")
        home = Path(given) if given else Path(tmp) / "home"
        sys.exit(asyncio.run(main(home, Path(tmp))))
