"""``segue chat --tui`` at the command line: Textual is loaded only when asked for."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.chat.helpers import write_script
from tests.front import main


def test_tui_needs_a_terminal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = write_script(tmp_path / "s.json", [])
    status = main(["--home", str(tmp_path / "home"), "chat", "--tui", "-m", f"scripted:{script}"])
    assert status == 2
    assert "needs a terminal" in capsys.readouterr().err


def test_the_line_chat_never_loads_textual(tmp_path: Path) -> None:
    script = write_script(tmp_path / "s.json", [{"text": "hello"}])
    argv = ["--home", str(tmp_path / "home"), "chat", "-m", f"scripted:{script}"]
    code = (
        "import sys\n"
        "from segue._cli.main import main\n"
        f"status = main({argv!r})\n"
        "print('status', status, 'textual' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], input="hi\n", capture_output=True, text=True,
        cwd=tmp_path, check=True,
    )
    assert "hello" in out.stdout
    assert out.stdout.strip().endswith("status 0 False")
