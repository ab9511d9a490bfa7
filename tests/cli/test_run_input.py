"""``segue run``'s prompt from -f FILE, from -, and from a pipe (with and without PROMPT), and
its approval: denied by default with a durable result, allowed with --approve (R38)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from segue.history import HistoryStore
from segue.workspace import Layout

WS = "runs"


def _run(tmp: Path, *args: str, stdin: str | None = None,
         responses: list[dict[str, Any]] | None = None) -> subprocess.CompletedProcess[str]:
    script = tmp / "script.json"
    script.write_text(json.dumps({"contextWindow": 200000, "encoding": "o200k_base",
                                  "responses": responses or [{"text": "OK"}]}))
    return subprocess.run(
        [sys.executable, "-m", "segue", "--home", str(tmp / "home"), "-w", WS, "run",
         "-m", f"scripted:{script}", *args],
        input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL,
        cwd=tmp, capture_output=True, text=True, timeout=120, check=False,
    )


def _user_texts(tmp: Path) -> list[str]:
    return [r.text for r in HistoryStore(Layout(tmp / "home", WS)).rows() if r.role == "user"]


def test_a_200_kb_prompt_from_a_file(tmp_path: Path) -> None:
    big = "".join(f"line {i} of a long log\n" for i in range(9000))
    assert len(big) > 200_000
    (tmp_path / "big.txt").write_text(big)
    done = _run(tmp_path, "-f", "big.txt")
    assert done.returncode == 0, done.stderr
    assert _user_texts(tmp_path) == [big]


def test_dash_reads_standard_input(tmp_path: Path) -> None:
    done = _run(tmp_path, "-", stdin="from the pipe\n")
    assert done.returncode == 0, done.stderr
    assert _user_texts(tmp_path) == ["from the pipe\n"]


def test_a_pipe_and_a_prompt_are_both_sent(tmp_path: Path) -> None:
    done = _run(tmp_path, "explain", stdin="Traceback: boom\n")
    assert done.returncode == 0, done.stderr
    assert _user_texts(tmp_path) == ["explain\n\nTraceback: boom\n"]


def test_no_prompt_at_all_is_bad_usage(tmp_path: Path) -> None:
    done = _run(tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "segue: error: no prompt: give PROMPT, -f FILE, or pipe it on standard input (or -)")


def test_bash_is_denied_without_approval_and_runs_with_approve_full(tmp_path: Path) -> None:
    call = {"text": "", "toolCalls": [{"name": "bash", "input": {"command": "touch made"}}]}
    done = _run(tmp_path, "--json", "go", responses=[call, {"text": "told"}])
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "made").exists()
    rows = list(HistoryStore(Layout(tmp_path / "home", WS)).rows())
    outputs = [p.output for r in rows for p in r.parts if p.type == "dynamic-tool"]
    assert outputs[0]["error"]["code"] == "approval_denied"
    assert "--approve" in outputs[0]["error"]["message"]
    assert json.loads(done.stdout.splitlines()[-1])["text"] == "told"

    again = _run(tmp_path, "--approve", "full", "go", responses=[call, {"text": "done"}])
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "made").exists()
