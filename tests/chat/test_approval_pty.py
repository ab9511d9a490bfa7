"""``segue chat`` in a real terminal: a bracketed paste is one message, and tools that change
the machine ask first (R38): y runs once, n records a denial the model reads, a remembers a
rule for the workspace, Ctrl-C at the question is no."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("termios")

from segue import HistoryStore, Layout, Row
from tests.chat.terminal import Terminal

PROMPT = r"\[\d+% · compacts by 75%\] › "
ASK = r"Allow\? \[y/N/a\] "
WORKSPACE = "ws"


@pytest.fixture
def env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("SEGUE_HOME", "NO_COLOR")}
    env.update(TERM="xterm", LANG="C.UTF-8", LC_ALL="C.UTF-8")
    return env


def _chat(tmp: Path, responses: list[dict[str, Any]], env: dict[str, str],
          terminals: list[Terminal]) -> Terminal:
    script = tmp / "script.json"
    script.write_text(json.dumps(
        {"contextWindow": 16000, "encoding": "o200k_base", "responses": responses}))
    work = tmp / "work"
    work.mkdir(exist_ok=True)
    terminal = Terminal(
        [sys.executable, "-m", "segue", "--home", str(tmp / "home"), "-w", WORKSPACE, "chat",
         "-m", f"scripted:{script}"],
        cwd=work, env=env,
    )
    terminals.append(terminal)
    return terminal


def _rows(tmp: Path) -> list[Row]:
    return list(HistoryStore(Layout(tmp / "home", WORKSPACE)).rows())


def _bash(command: str) -> dict[str, Any]:
    return {"text": "", "toolCalls": [{"name": "bash", "input": {"command": command}}]}


def _outputs(rows: list[Row]) -> list[Any]:
    return [p.output for r in rows for p in r.parts if p.type == "dynamic-tool"]


def test_a_bracketed_paste_of_three_lines_is_one_message(
    tmp_path: Path, env: dict[str, str], terminals: list[Terminal]
) -> None:
    t = _chat(tmp_path, [{"text": "ONE REPLY"}, {"text": "NEVER"}], env, terminals)
    t.expect(PROMPT)
    # What a terminal sends for a pasted traceback: the paste markers around lines ended by CR.
    t.send("\x1b[200~Traceback (most recent call last):\r  File \"x.py\", line 1\r"
           "ZeroDivisionError: division by zero\x1b[201~")
    t.send("\r")
    t.expect("ONE REPLY")
    t.expect(PROMPT)
    t.send("\x04")
    assert t.wait_exit() == 0
    users = [r for r in _rows(tmp_path) if r.role == "user"]
    assert [u.text for u in users] == [
        'Traceback (most recent call last):\n  File "x.py", line 1\n'
        "ZeroDivisionError: division by zero"
    ]
    assert "NEVER" not in t.text  # one message, one model call


def test_yes_no_and_always_at_the_approval_question(
    tmp_path: Path, env: dict[str, str], terminals: list[Terminal]
) -> None:
    t = _chat(tmp_path, [
        _bash("echo one > one.txt"), {"text": "DONE-1"},
        _bash("echo two > two.txt"), {"text": "DONE-2"},
        _bash("ls -a"), {"text": "DONE-3"},
        _bash("ls -a"), {"text": "DONE-4"},
    ], env, terminals)
    work = tmp_path / "work"
    t.expect(PROMPT)
    t.type("make one")
    t.expect(r"bash wants to run this command:")
    t.expect(r"echo one > one\.txt")  # the exact command
    t.expect(ASK)
    assert not (work / "one.txt").exists()  # nothing runs before the answer
    t.type("y")
    t.expect("DONE-1")
    assert (work / "one.txt").read_text() == "one\n"

    t.expect(PROMPT)
    t.type("make two")
    t.expect(ASK)
    t.type("n")
    t.expect(r"not run; the model is told it was declined")
    t.expect("DONE-2")
    assert not (work / "two.txt").exists()

    t.expect(PROMPT)
    t.type("list")
    t.expect(r"a always allows bash:ls")
    t.expect(ASK)
    t.type("a")
    t.expect(r"remembered for this workspace")
    t.expect("DONE-3")
    t.expect(PROMPT)
    t.type("list long")  # the same ls -a matches the remembered rule: no question
    t.expect("DONE-4")
    t.expect(PROMPT)
    t.send("\x04")
    assert t.wait_exit() == 0
    assert t.text.count("Allow? [y/N/a]") == 3

    outputs = _outputs(_rows(tmp_path))
    assert len(outputs) == 4
    assert outputs[0]["exitCode"] == 0
    # The declined call is durable, as its own tool result the model read.
    assert outputs[1]["ok"] is False and outputs[1]["error"]["code"] == "approval_denied"
    assert "declined" in outputs[1]["error"]["message"]
    saved = json.loads((tmp_path / "home" / "approvals" / f"{WORKSPACE}.json").read_text())
    assert [r["action"] for r in saved["rules"]] == ["allow"]
    assert saved["rules"][0]["regex_match"].startswith("bash:ls")


def test_ctrl_c_at_the_question_declines_and_stops_the_turn(
    tmp_path: Path, env: dict[str, str], terminals: list[Terminal]
) -> None:
    t = _chat(tmp_path, [_bash("touch x.txt"), {"text": "AFTER"}], env, terminals)
    t.expect(PROMPT)
    t.type("touch it")
    t.expect(ASK)
    t.reading()  # the question is being read, not only shown
    t.send("\x03")
    t.expect(r"turn interrupted; the steps that settled are kept")
    t.expect(PROMPT)
    assert "AFTER" not in t.text  # the interrupted turn stopped before its next step
    t.type("and now")
    t.expect("AFTER")
    t.expect(PROMPT)
    t.send("\x04")
    assert t.wait_exit() == 0
    assert not (tmp_path / "work" / "x.txt").exists()
    assert _outputs(_rows(tmp_path))[0]["error"]["code"] == "approval_denied"


def test_piped_chat_cannot_ask_so_it_denies(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"contextWindow": 16000, "encoding": "o200k_base",
                                  "responses": [_bash("touch y.txt"), {"text": "OK"}]}))
    done = subprocess.run(
        [sys.executable, "-m", "segue", "--home", str(tmp_path / "home"), "-w", WORKSPACE,
         "chat", "-m", f"scripted:{script}"],
        input="touch it\ny\n", cwd=tmp_path, capture_output=True, text=True, timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "y.txt").exists()
    assert _outputs(_rows(tmp_path))[0]["error"]["code"] == "approval_denied"
