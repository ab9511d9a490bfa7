"""Every built-in tool's result, as ``segue run`` shows it to a person: a status line and a
short list, never the JSON the model reads (file_search, session_history, memory, file_read,
file_edit), with real tool calls made through the scripted provider."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from tests.scripted_cli import script


def _run(tmp_path: Path, calls: list[dict[str, object]]) -> str:
    work = tmp_path / "work"
    work.mkdir()
    (work / "app.py").write_text("def main():\n    return 'port 8443'\n")
    responses: list[dict[str, object]] = [
        {"text": "The port is 8443."},  # an earlier turn, for session_history to find
        {"text": "", "toolCalls": calls},
        {"text": "done"},
    ]
    model = script(tmp_path, responses)
    segue = [sys.executable, "-m", "segue", "--home", str(tmp_path / "home")]
    on = subprocess.run([*segue, "settings", "set", "experiments.tokenBudget", "true"],
                        capture_output=True, text=True, timeout=60, check=False)
    assert on.returncode == 0, on.stderr  # session_history is offered with the experiment on
    base = [*segue, "-w", "ws", "run", "-m", model, "--approve", "full"]
    for prompt in ("what is the port?", "look"):
        done = subprocess.run([*base, prompt], cwd=work, capture_output=True, text=True,
                              timeout=60, check=False, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, done.stderr
    return done.stdout + done.stderr


def test_built_in_results_are_shown_for_people(tmp_path: Path) -> None:
    shown = _run(tmp_path, [
        {"name": "file_search", "input": {"query": "port"}},
        {"name": "file_search", "input": {"pattern": "*.py"}},
        {"name": "session_history", "input": {"action": "search", "query": "port 8443"}},
        {"name": "session_history", "input": {"action": "list_windows"}},
        {"name": "file_read", "input": {"path": "app.py"}},
        {"name": "file_edit", "input": {"path": "app.py", "old_string": "8443",
                                         "new_string": "9000"}},
        {"name": "memory", "input": {"command": "write", "path": "/memories/workspace/a.md",
                                      "content": "one\ntwo\n"}},
        {"name": "memory", "input": {"command": "view"}},
        {"name": "memory", "input": {"command": "view", "path": "/memories/workspace/a.md"}},
    ])
    results = [line.strip() for line in shown.splitlines() if line.strip().startswith("→")]
    assert len(results) == 9, shown
    assert not any(r.startswith("→ {") for r in results), results  # no raw JSON
    assert re.search(r"→ 1 match \(\d+ files? scanned\)\n\s+app\.py:2: return 'port 8443'", shown)
    assert re.search(r"→ 1 file \(\d+ files? scanned\)\n\s+app\.py", shown)
    assert re.search(r"→ \d+ hits?\n", shown)  # the window in view is not looked back at
    assert re.search(r"→ 1 window\n\s+w:0 root: \d+ items #\S+ … #\S+", shown)
    assert "→ ok · app.py lines 1–2" in shown
    assert "→ ok · app.py: 1 replacement at line 2" in shown
    assert "→ ok · /memories/workspace/a.md (8 bytes)" in shown
    assert re.search(r"→ 1 file\n\s+/memories/workspace/a\.md", shown)
    assert re.search(r"→ ok · 2 lines\n\s+one\n\s+two", shown)


def test_session_history_hits_are_a_short_list_with_window_and_item_ids(
        tmp_path: Path) -> None:
    """What session_history really returns for a search (``segue history tool`` answers
    exactly as the tool does), as it is shown."""
    from segue._render.tool_text import result_text

    segue = [sys.executable, "-m", "segue", "--home", str(tmp_path / "home")]
    demo = subprocess.run([*segue, "demo", "--json"], capture_output=True, text=True,
                          timeout=120, check=False, stdin=subprocess.DEVNULL, cwd=tmp_path)
    assert demo.returncode == 0, demo.stderr  # a session that rolled over: windows to search
    done = subprocess.run(
        [*segue, "-w", "demo", "history", "tool",
         json.dumps({"action": "search", "query": "error", "limit": 3})],
        capture_output=True, text=True, timeout=60, check=False, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["ok"] is True and answer["items"], answer  # compared against real hits
    head, *hits = result_text(answer).splitlines()
    assert head == f"    → {len(answer['items'])} hit" + ("s" if len(answer["items"]) > 1 else "")
    for hit, item in zip(hits, answer["items"], strict=False):
        assert hit.startswith(f"      #{item['itemId']} ({item['windowId']}, {item['role']}): ")


def test_an_unknown_shape_is_still_shown_compactly(tmp_path: Path) -> None:
    from segue._render.tool_text import result_text

    shown = result_text({"ok": True, "custom": [1, 2]})
    assert shown == "    → " + json.dumps({"ok": True, "custom": [1, 2]})


def test_bash_denied_under_auto_edit_does_not_suggest_auto_edit(tmp_path: Path) -> None:
    from segue import HistoryStore, Layout

    work = tmp_path / "work"
    work.mkdir()
    model = script(tmp_path, [{"text": "", "toolCalls": [{"name": "bash",
                                                          "input": {"command": "touch x"}}]},
                              {"text": "done"}])
    done = subprocess.run(
        [sys.executable, "-m", "segue", "--home", str(tmp_path / "home"), "-w", "ws", "run",
         "-m", model, "--approve", "auto-edit", "go"],
        cwd=work, capture_output=True, text=True, timeout=60, check=False,
        stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert not (work / "x").exists()
    rows = HistoryStore(Layout(tmp_path / "home", "ws"), durable=False).rows()
    (output,) = [p.output for r in rows for p in r.parts if p.toolName == "bash"]
    message = output["error"]["message"]
    assert output["error"]["code"] == "approval_denied"
    assert "auto-edit or" not in message and "--approve auto-edit" not in message
    assert "approval mode full" in message
