"""Approving tool calls from Python (SPEC.md R38), offline.

Tools that change the machine (bash, file_write, file_edit) run only when approved. Here the
approver is a plain function: it sees the exact command (or the diff of a file edit) and
answers. It allows read-only commands, declines anything that deletes, and remembers
"always" for the file edits of this example's workspace. A declined call is not run; it is
recorded as that call's result, so the model reads that it was declined.

    SEGUE_HOME=/tmp/segue-lib python examples/library_approval.py
    cat /tmp/segue-lib/approvals/library-approval.json       # the remembered rule

Exits 0 when every call was decided as shown, 1 otherwise.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import segue

WORKSPACE = "library-approval"
RESPONSES = [
    {"text": "First a look around.",
     "toolCalls": [{"name": "bash", "input": {"command": "ls"}}]},
    {"text": "Now I clean up.",
     "toolCalls": [{"name": "bash", "input": {"command": "rm -rf draft"}}]},
    {"text": "Understood, I keep it. I write the summary instead.",
     "toolCalls": [{"name": "file_write",
                    "input": {"path": "summary.md", "content": "# Summary\n\nAll good.\n"}}]},
    {"text": "Done: summary.md is written, draft/ is untouched."},
]


def approver(request: segue.ApprovalRequest) -> segue.Answer:
    """Called whenever the mode asks. ``preview`` is what would run: the exact command for
    bash, the unified diff for a file edit."""
    print(f"[asked] {request.tool}: {request.preview.splitlines()[0]}")
    if request.tool == "bash":
        if request.preview.split()[0] in ("ls", "cat", "git"):
            return segue.Answer.YES
        return segue.Answer.NO
    # A file edit: allow it, and every later edit of that same file in this workspace.
    print(f"[always] remembering {request.pattern}")
    return segue.Answer.ALWAYS


def main(home: Path, scratch: Path) -> int:
    script = scratch / "script.json"
    script.write_text(json.dumps(
        {"contextWindow": 16000, "encoding": "o200k_base", "responses": RESPONSES}))
    work = scratch / "work"
    (work / "draft").mkdir(parents=True)
    rules = home / "approvals" / f"{WORKSPACE}.json"
    rules.unlink(missing_ok=True)  # every run asks afresh

    with segue.open_session(WORKSPACE, home=home, workdir=work, model=f"scripted:{script}",
                            approve="ask", approver=approver) as session:
        session.clear_hard()
        results: list[object] = []
        turn = session.stream("tidy up and summarize")
        for event in turn:
            if isinstance(event, segue.ToolFinished):
                results.append(event.output)
                print(f"[result] {event.name}: {json.dumps(event.output)[:90]}")
        print(f"[turn] {turn.result.status}: {turn.result.text}")

    declined = [r for r in results if isinstance(r, dict) and not r.get("ok")]
    remembered = json.loads(rules.read_text())["rules"] if rules.exists() else []
    ok = (
        (work / "draft").is_dir()                      # rm -rf was declined, not run
        and (work / "summary.md").exists()             # the file edit was allowed
        and len(declined) == 1
        and declined[0]["error"]["code"] == "approval_denied"
        and [r["action"] for r in remembered] == ["allow"]
    )
    return 0 if ok else 1


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="segue-example-") as tmp:
        given = os.environ.get("SEGUE_HOME")
        sys.exit(main(Path(given) if given else Path(tmp) / "home", Path(tmp)))
