"""segue from Python, offline: open a session, send, stream a turn's events, read it back.

The model is segue's scripted provider (it replays the responses below), so nothing leaves
the machine and no key is needed. The transcript is kept under SEGUE_HOME (a temporary
home when it is not set, removed at the end):

    SEGUE_HOME=/tmp/segue-lib python examples/library_quickstart.py
    segue --home /tmp/segue-lib -w library-quickstart history windows

Exits 0 when every step did what it shows, 1 otherwise.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import segue

WORKSPACE = "library-quickstart"
RESPONSES = [
    {"text": "Hello! I am a scripted model: I replay a file, offline."},
    {"text": "Let me look at the working directory first.",
     "toolCalls": [{"name": "bash", "input": {"command": "ls"}}]},
    {"text": "I see notes.txt; it is the only file here."},
]


def main(home: Path, scratch: Path) -> int:
    script = scratch / "script.json"
    script.write_text(json.dumps(
        {"contextWindow": 16000, "encoding": "o200k_base", "responses": RESPONSES}))
    work = scratch / "work"
    work.mkdir()
    (work / "notes.txt").write_text("remember the milk\n")

    with segue.open_session(
        WORKSPACE,
        home=home,
        workdir=work,                      # the tools work here, and only here
        model=f"scripted:{script}",
        experiment=True,                   # roll over instead of compacting (this session only)
        approve="full",                    # bash runs without asking (see library_approval.py)
    ) as session:
        session.clear_hard()               # start from an empty workspace on every run

        # 1. send: one message, run to the end of the turn.
        result = session.send("hi")
        print(f"[send] {result.status}: {result.text}")

        # 2. stream: the same turn, event by event, as it happens.
        turn = session.stream("what is in this directory?")
        for event in turn:
            if isinstance(event, segue.AssistantText):
                print(event.text, end="", flush=True)
            elif isinstance(event, segue.ToolStarted):
                print(f"\n[tool] {event.name} {dict(event.input)}")
            elif isinstance(event, segue.ToolFinished):
                print(f"[tool] {event.name} -> {event.output['output'].strip()!r}")
            elif isinstance(event, segue.StepUsage):
                print(f"\n[usage] {event.percent}% of the window ({event.label})")
        print(f"[stream] {turn.result.status}, window {turn.result.window_id}")

    # 3. read it back: every item of the workspace, as `segue history` shows them.
    history = segue.open_history(WORKSPACE, home=home)
    for window in history.windows():
        print(f"[history] {window.window_id} ({window.kind}): {window.items} items")
    hits = history.search("notes.txt")
    for hit in hits:
        print(f"[search] #{hit.item_id} {hit.label}: {hit.snippet}")

    ok = (result.status == "completed" and turn.result.status == "completed"
          and any("notes.txt" in h.snippet for h in hits if h.role == "assistant"))
    return 0 if ok else 1


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="segue-example-") as tmp:
        given = os.environ.get("SEGUE_HOME")
        sys.exit(main(Path(given) if given else Path(tmp) / "home", Path(tmp)))
