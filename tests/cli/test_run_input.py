"""``segue run``'s prompt from -f FILE, from -, and from a pipe (with and without PROMPT), and
its approval: denied by default with a durable result, allowed with --approve (R38)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from segue import HistoryStore, Layout

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


def test_ctrl_c_stops_the_run_at_once_with_exit_130(tmp_path: Path) -> None:
    fifo = tmp_path / "requests.fifo"
    os.mkfifo(fifo)
    script = tmp_path / "script.json"
    # Each step opens the FIFO to log its request and waits there for this test to read it:
    # a provider call in flight, held while SIGINT arrives.
    script.write_text(json.dumps({
        "contextWindow": 200000, "encoding": "o200k_base", "requestLog": str(fifo),
        "responses": [{"text": "", "toolCalls": [{"name": "memory", "input": {"command": "view"}}]},
                      {"text": "NEVER"}],
    }))
    proc = subprocess.Popen(
        [sys.executable, "-m", "segue", "--home", str(tmp_path / "home"), "-w", WS, "run",
         "-m", f"scripted:{script}", "go on"],
        cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    try:
        layout = Layout(tmp_path / "home", WS)
        deadline = time.monotonic() + 60
        # SIGINT only once the step is really held: a thread of the run blocked opening the
        # FIFO (the kernel's wait for a reader). Sent earlier, the run would stop before the
        # step and never open the FIFO, and this test would wait for it forever.
        while not (layout.chat.exists() and b"go on" in layout.chat.read_bytes()
                   and _waits_for_fifo_reader(proc.pid)):
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGINT)  # the first step is held at the FIFO
        # R40: the run does not wait for the provider call in flight; it stops now.
        out, err = proc.communicate(timeout=60)
        os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))  # lets a held writer go, if any
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err.decode()
    assert b"NEVER" not in out
    assert err.decode().count("segue: interrupted: the steps that settled are kept") == 1
    rows = list(HistoryStore(layout).rows())
    # The stopped step had streamed nothing: no reply to keep, and its tool call never ran.
    assert [r.role for r in rows] == ["user"]


def _waits_for_fifo_reader(pid: int) -> bool:
    """Whether a thread of ``pid`` is blocked opening a FIFO that has no reader yet (True
    also where the kernel does not say where a thread waits: then the test cannot know)."""
    said = False
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            where = (task / "wchan").read_text()
        except OSError:
            continue
        if where == "wait_for_partner":
            return True
        said = said or where not in ("", "0")
    return not said


def _outputs(tmp: Path) -> list[Any]:
    rows = HistoryStore(Layout(tmp / "home", WS)).rows()
    return [p.output for r in rows for p in r.parts if p.type == "dynamic-tool"]


def test_the_approval_setting_and_the_workspace_mode(tmp_path: Path) -> None:
    both = {"text": "", "toolCalls": [
        {"name": "file_write", "input": {"path": "notes.txt", "content": "hi\n"}},
        {"name": "bash", "input": {"command": "touch made"}},
    ]}
    home = tmp_path / "home"
    setting = subprocess.run(
        [sys.executable, "-m", "segue", "--home", str(home), "settings", "set", "approval",
         "auto-edit"], capture_output=True, text=True, check=False)
    assert setting.returncode == 0, setting.stderr
    # Each run's script differs: the scripted provider keeps its place in a script it saw.
    done = _run(tmp_path, "go", responses=[both, {"text": "ok 1"}])
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "notes.txt").read_text() == "hi\n"  # auto-edit: the edit ran
    assert not (tmp_path / "made").exists()  # bash would ask, and run cannot: denied
    assert [o.get("ok") for o in _outputs(tmp_path)] == [True, False]

    # The workspace's own mode wins over the setting; --approve wins over both.
    (home / "approvals").mkdir(exist_ok=True)
    (home / "approvals" / f"{WS}.json").write_text(json.dumps({"mode": "deny", "rules": []}))
    again = _run(tmp_path, "go", responses=[both, {"text": "ok 2"}])
    assert again.returncode == 0, again.stderr
    assert [o["error"]["code"] for o in _outputs(tmp_path)[2:]] == ["approval_denied"] * 2
    forced = _run(tmp_path, "--approve", "full", "go", responses=[both, {"text": "ok 3"}])
    assert forced.returncode == 0, forced.stderr
    assert (tmp_path / "made").exists()


def test_a_bad_approvals_file_is_one_clear_line(tmp_path: Path) -> None:
    (tmp_path / "home" / "approvals").mkdir(parents=True)
    (tmp_path / "home" / "approvals" / f"{WS}.json").write_text("{not json")
    done = _run(tmp_path, "--json", "go")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "is not valid JSON" in done.stderr
    assert json.loads(done.stdout)["status"] == "error"  # the closing object, before the turn
