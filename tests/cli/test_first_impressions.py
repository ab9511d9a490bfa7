"""What a new user sees first, from a fresh home: no note about reading without the lock for
a home segue itself made (the first run of a workspace, a listing after a failed run, a
command on a workspace with no transcript), and the README's prompt file ships with segue."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.scripted_cli import script

ROOT = Path(__file__).resolve().parents[2]
LOCK_NOTE = "could not take the lock"


def _segue(home: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "segue", "--home", str(home), *args],
                          cwd=cwd, capture_output=True, text=True, timeout=60, check=False,
                          stdin=subprocess.DEVNULL)


def test_the_first_run_of_a_new_workspace_says_nothing_about_the_lock(tmp_path: Path) -> None:
    home = tmp_path / "home"
    model = script(tmp_path, [{"text": "first"}, {"text": "second"}])
    for n in range(2):
        done = _segue(home, "-w", "fresh", "run", "-m", model, f"message {n}", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert LOCK_NOTE not in done.stderr
    listed = _segue(home, "-w", "fresh", "history", "windows", cwd=tmp_path)
    assert "4 item(s)" in listed.stdout and LOCK_NOTE not in listed.stderr


def test_after_a_failed_run_and_on_an_unused_workspace_no_lock_note(tmp_path: Path) -> None:
    home = tmp_path / "home"
    failed = _segue(home, "-w", "ws", "run", "-m", f"scripted:{tmp_path / 'missing.json'}",
                    "hi", cwd=tmp_path)
    assert failed.returncode != 0 and failed.stderr.strip()
    for args in (("-w", "ws", "history", "windows"), ("-w", "nosuch", "compact", "-m",
                                                      script(tmp_path, [{"text": "x"}]))):
        done = _segue(home, *args, cwd=tmp_path)
        assert LOCK_NOTE not in done.stderr, (args, done.stderr)


def test_the_readme_prompt_file_ships_with_segue(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text()
    assert "segue run -f examples/prompt.md" in readme
    assert (ROOT / "examples" / "prompt.md").read_text().strip()
    home = tmp_path / "home"
    model = script(tmp_path, [{"text": "reviewed"}])
    done = _segue(home, "-w", "ws", "run", "-m", model, "-f", "examples/prompt.md", cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "reviewed" in done.stdout
