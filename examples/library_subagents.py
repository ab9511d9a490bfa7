"""Sub-agents from Python, offline: a parent hands two tasks to child agents, one child rolls
over in its own workspace, and the parent finds a detail in that child's first window.

The parent (the ``exec`` agent) calls the ``task`` tool twice. The first child, ``explore``,
reads three long logs in a small (8,000-token) context window, so it rolls over to a fresh
window of its own; it also tries ``bash``, which ``explore`` does not have, and is refused.
The second child answers a question. The parent then asks ``session_history`` with
``task_id`` for the deploy key the first child read before its rollover. The model is
segue's scripted provider: nothing leaves the machine and no key is needed.

    SEGUE_HOME=/tmp/segue-lib python examples/library_subagents.py
    segue --home /tmp/segue-lib workspaces
    segue --home /tmp/segue-lib -w library-subagents.t1 history windows

Exits 0 when every step did what it shows, 1 otherwise.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import segue

WORKSPACE = "library-subagents"
FIRST = f"{WORKSPACE}.t1"
SECOND = f"{WORKSPACE}.t2"
KEY = "SHA256:q7ZtK9"


def _call(name: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "input": args}


RESPONSES: list[dict[str, Any]] = [
    # the parent delegates
    {"toolCalls": [_call("task", agent="explore",
                         prompt="Read log0.txt, log1.txt and log2.txt and summarize them.")]},
    # the first child: bash is not among explore's tools; three long reads roll it over
    {"toolCalls": [_call("bash", command="cat log*.txt")]},
    {"toolCalls": [_call("file_read", path="log0.txt")]},
    {"toolCalls": [_call("file_read", path="log1.txt")]},
    {"toolCalls": [_call("file_read", path="log2.txt")]},
    {"text": "Three worker logs; every request was handled."},
    # the parent delegates again
    {"toolCalls": [_call("task", agent="explore", prompt="Which file names the release?")]},
    {"text": "None of them: the logs name no release."},
    # the parent looks in the first child's history for what it read before rolling over
    {"toolCalls": [_call("session_history", action="search", query="fingerprint",
                         match="literal", task_id=FIRST)]},
    {"text": f"The deploy key fingerprint is {KEY}."},
]


def _logs(work: Path) -> None:
    for n in range(3):
        lines = [f"log {n}.{i}: worker {i * 7 % 13} handled request {i * 31 + n}"
                 for i in range(160)]
        if n == 0:
            lines.insert(0, f"the deploy key fingerprint is {KEY}")
        (work / f"log{n}.txt").write_text("\n".join(lines) + "\n")


def main(home: Path, scratch: Path) -> int:
    script = scratch / "script.json"
    script.write_text(json.dumps(
        {"contextWindow": 8000, "encoding": "o200k_base", "responses": RESPONSES}))
    work = scratch / "work"
    work.mkdir()
    _logs(work)

    def on_event(event: segue.Event) -> None:
        if isinstance(event, segue.TaskStarted):
            print(f"[task] {event.task_id} ({event.agent}) started: {event.prompt}")
        elif isinstance(event, segue.TaskFinished):
            print(f"[task] {event.task_id} {event.status}, {event.rollovers} rollover(s)")

    with segue.open_session(
        WORKSPACE, home=home, workdir=work, model=f"scripted:{script}", experiment=True,
        approve="full", on_event=on_event,
    ) as session:
        session.clear_hard()  # start afresh on every run: the tasks' workspaces go too
        result = session.send("What is the deploy key fingerprint in the logs?")
        print(f"[turn] {result.status}: {result.text}")
        ok = result.status == "completed" and KEY in result.text

        # The tasks, each in a workspace of its own under the parent.
        tasks = segue.list_tasks(session)
        print("[tasks] " + ", ".join(f"{t.task_id}={t.agent}:{t.status}" for t in tasks))
        ok &= [t.task_id for t in tasks] == [FIRST, SECOND]

        # The first child's own transcript: it rolled over, and it was refused bash.
        with segue.open_history(FIRST, home=home) as child:
            kinds = [w.kind for w in child.windows()]
            print(f"[{FIRST}] windows: {', '.join(kinds)}")
            ok &= kinds[:2] == ["root", "rollover"]
            refused = [i.text for i in child.items(child.windows()[0].window_id)
                       if "tool_not_allowed" in i.text]
            print(f"[{FIRST}] bash refused: {bool(refused)}")
            ok &= bool(refused)

        # What the parent's model reads with task_id, and what it may not read.
        with segue.open_history(session) as parent:
            # The parent's model was given the detail as its session_history result.
            given = [i for w in parent.windows() for i in parent.items(w.window_id)
                     if "session_history" in i.text and KEY in i.text]
            print(f"[parent] the look-back result held the key: {bool(given)}")
            ok &= bool(given)
            model_view = parent.as_model()
            found = model_view.call({"action": "search", "query": "fingerprint",
                                     "match": "literal", "task_id": FIRST})
            where = sorted({i["windowId"] for i in found.get("items", [])})
            print(f"[look-back] task_id={FIRST}: {len(found.get('items', []))} item(s) in "
                  f"{', '.join(where)}")
            ok &= where == ["w:0"]
            bad = model_view.call({"action": "list_windows", "task_id": "no-such.t1"})
            print(f"[look-back] bad task_id: {bad['error']['code']}")
            ok &= bad["error"]["code"] == "invalid_argument"
    return 0 if ok else 1


if __name__ == "__main__":
    configured = os.environ.get("SEGUE_HOME")
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        target = Path(configured) if configured else scratch / "home"
        sys.exit(main(target, scratch))
