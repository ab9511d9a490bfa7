"""The README's "Using segue from Python" code runs as written: the only changes are the
model (a scripted one, offline) and the working directory (a temporary one)."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import segue
from tests.api.helpers import bash, script

README = Path(__file__).resolve().parents[2] / "README.md"
SRC = Path(segue.__file__).resolve().parents[1]


def _blocks() -> list[str]:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Using segue from Python\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.DOTALL)


def test_the_readme_python_runs(tmp_path: Path) -> None:
    blocks = _blocks()
    assert len(blocks) == 2
    work = tmp_path / "work"
    work.mkdir()
    (work / "test_app.py").write_text("def test_ok():\n    pass\n")
    model = script(tmp_path / "s.json", {"text": "Fixed it."},
                   bash("ls", "Running it."), {"text": "The suite passes."})
    code = "\n".join(blocks)
    assert code.count('"openai:gpt-4o"') == 1 and code.count('"/home/me/src/my-project"') == 1
    code = code.replace('"openai:gpt-4o"', repr(model)).replace(
        '"/home/me/src/my-project"', repr(str(work)))
    env = {k: v for k, v in os.environ.items() if not k.startswith("SEGUE_")}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
        env={**env, "SEGUE_HOME": str(tmp_path / "home"), "PYTHONPATH": str(SRC)},
        timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("completed Fixed it. {'inputTokens': ")  # send: its result
    # stream: the text around the tool call, the approver printing the exact command
    assert lines[1:3] == ["Running it.ls", "The suite passes.completed"]
    assert lines[3] == "w:0 root 5"  # the window, read back
    assert lines[4] == "0 fix the failing test"  # the search hit
    assert lines[5] == "5"
    answer = ast.literal_eval(lines[6])  # the tool's answer, printed as a dict
    assert answer["ok"] is True and [i["itemId"] for i in answer["items"]] == ["0"]
    assert "'windowId': 'w:0'" in lines[7]
