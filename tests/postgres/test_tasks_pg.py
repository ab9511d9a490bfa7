"""Sub-agents on the PostgreSQL store (R41, SPEC.md §8): a task's child workspace keeps its
transcript in the parent's store, and ``task_id`` reads it there, floor included."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

WS = "pgtasks"
CHILD = f"{WS}.t1"


ROOT = Path(__file__).resolve().parents[2]


def run(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run([sys.executable, "-m", "segue", "--home", str(home), *args],
                          capture_output=True, text=True, env=env, timeout=120, check=False)


def segue(
    home: Path, url: str, *args: str, workspace: str = WS
) -> subprocess.CompletedProcess[str]:
    return run(home, "--store", url, "-w", workspace, *args)


def test_a_task_on_postgresql(pg_url: str, tmp_path: Path, workdir: Path) -> None:
    home = tmp_path / "home"
    assert run(home, "store", "init", pg_url).returncode == 0
    assert run(home, "settings", "set", "experiments.tokenBudget", "true").returncode == 0
    search: dict[str, Any] = {"action": "search", "query": "vermilion-3", "match": "literal",
                              "task_id": CHILD}
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"contextWindow": 16000, "encoding": "o200k_base", "responses": [
        {"toolCalls": [{"name": "task", "input": {"agent": "explore", "prompt": "keep it"}}]},
        {"text": "the word is vermilion-3"},
        {"toolCalls": [{"name": "session_history", "input": search}]},
        {"text": "found"},
    ]}))
    result = segue(home, pg_url, "run", "-m", f"scripted:{script}", "--json", "go")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.splitlines()[-1])["tasks"][0]["taskId"] == CHILD
    # The child's rows are in PostgreSQL, not in JSONL files under the home.
    assert not (home / "sessions" / CHILD / "chat.jsonl").exists()
    windows = segue(home, pg_url, "history", "windows", "--json", workspace=CHILD)
    assert windows.returncode == 0 and json.loads(windows.stdout)["windows"][0]["items"] == 2
    answer = json.loads(segue(home, pg_url, "history", "tool", json.dumps(search)).stdout)
    assert [i["windowId"] for i in answer["items"]] == ["w:0"]
    assert segue(home, pg_url, "clear", "--soft", workspace=CHILD).returncode == 0
    after = json.loads(segue(home, pg_url, "history", "tool", json.dumps(search)).stdout)
    assert after["ok"] is True and after["items"] == []  # the child's floor, on PostgreSQL
