"""What ``segue chat`` looks like in a real terminal (a pseudo-terminal) that is narrower than
the reply: the model's words wrap at word boundaries at the terminal's width, what you typed
stays on the prompt's line apart from the reply, and a command's result reads as its exit
status and the first lines of its output, not the JSON the model receives."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

pytest.importorskip("termios")

from tests.chat.terminal import Terminal

COLUMNS = 44
PROMPT = r"\[\d+% · compacts by 75%\] › "
WORDS = [f"word{i}" + "x" * (i % 7) for i in range(60)]


def test_a_reply_wraps_at_word_boundaries_and_a_tool_result_reads_as_text(
    tmp_path: Path, terminals: list[Terminal]
) -> None:
    command = "seq 9 | sed 's/^/line /'"
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"contextWindow": 16000, "encoding": "o200k_base", "responses": [
        {"text": "", "toolCalls": [{"name": "bash", "input": {"command": command}}]},
        {"text": " ".join(WORDS)},
    ]}))
    (tmp_path / "work").mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("SEGUE_HOME", "NO_COLOR", "COLUMNS", "LINES")}
    env.update(TERM="xterm", LANG="C.UTF-8", LC_ALL="C.UTF-8")
    terminal = Terminal(
        [sys.executable, "-m", "segue", "--home", str(tmp_path / "home"), "-w", "ws", "chat",
         "-m", f"scripted:{script}", "--approve", "full"],
        cwd=tmp_path / "work", env=env, columns=COLUMNS,
    )
    terminals.append(terminal)
    terminal.expect(PROMPT)
    terminal.type("count")
    start = terminal.pos
    terminal.expect(PROMPT)
    shown = terminal.text[start : terminal.pos]
    terminal.send("\x04")
    assert terminal.wait_exit() == 0

    # What you typed is on the prompt's line; everything after it is segue's or the model's.
    assert shown.startswith("count\n")
    # The command and its result, as a person reads them.
    assert f"⚙ bash $ {command}\n" in shown
    assert re.search(r"→ exit 0 · \d+\.\ds\n", shown)
    excerpt = re.findall(r"^ {6}(line \d)$", shown, re.MULTILINE)
    assert excerpt == [f"line {n}" for n in range(1, 7)]
    assert "… 3 more lines" in shown
    assert '"output"' not in shown and "\\n" not in shown

    # The reply: every word whole, in order, on lines no wider than the terminal.
    reply = shown[shown.index(WORDS[0]) : shown.rindex(WORDS[-1]) + len(WORDS[-1])]
    lines = reply.split("\n")
    assert len(lines) > 5
    assert all(len(line) <= COLUMNS for line in lines), lines
    assert reply.split() == WORDS  # a word cut at the edge would be two here
