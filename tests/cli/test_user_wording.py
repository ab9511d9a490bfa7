"""Errors a user reads are in the user's words: no SPEC rule numbers, no Python values, and a
refused import of another agent's transcript names the ``--from`` it needs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest


def _segue(*args: str, cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "segue", *args], cwd=cwd, input=stdin,
                          capture_output=True, text=True, timeout=60, check=False)


def test_tokens_count_with_an_unknown_provider_lists_them_as_written(tmp_path: Path) -> None:
    done = _segue("tokens", "count", "-m", "foo:bar", "-", cwd=tmp_path, stdin="hi")
    assert done.returncode == 2
    assert "('" not in done.stderr and "')" not in done.stderr  # no Python tuple
    assert "use one of openai:, " in done.stderr


def test_an_unknown_model_family_error_names_no_spec_rule(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert _segue("--home", str(home), "settings", "set", "contextWindow.openai-compatible:x",
                  "8000", cwd=tmp_path).returncode == 0
    done = _segue("--home", str(home), "-w", "ws", "run", "-m", "openai-compatible:x", "hi",
                  cwd=tmp_path)
    assert done.returncode == 2
    assert "segue knows no tokenizer for this model family" in done.stderr
    assert "SPEC" not in done.stderr and "R17" not in done.stderr


CLAUDE_LINE = {"type": "user", "uuid": "u1", "sessionId": "s1",
               "timestamp": "2025-01-01T00:00:00Z", "message": {"role": "user", "content": "hi"}}
CODEX_LINE = {"timestamp": "2025-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "x"}}


@pytest.mark.parametrize(("line", "fmt"), [(CLAUDE_LINE, "claude-code"), (CODEX_LINE, "codex")])
def test_importing_another_agents_transcript_without_from_names_the_flag(
        tmp_path: Path, line: dict[str, object], fmt: str) -> None:
    session = tmp_path / "session file.jsonl"
    session.write_text(json.dumps(line) + "\n")
    home = tmp_path / "home"
    done = _segue("--home", str(home), "-w", "ws", "history", "import", str(session),
                  cwd=tmp_path)
    assert done.returncode == 1
    (message,) = done.stderr.strip().splitlines()
    assert message.endswith(f"this looks like a {fmt} transcript: segue history import "
                            f"--from {fmt} '{session}'")
    assert not (home / "sessions").exists()


def test_a_broken_xum_file_gets_no_from_hint(tmp_path: Path) -> None:
    session = tmp_path / "s.jsonl"
    session.write_text('{"role": "user"}\n')
    done = _segue("--home", str(tmp_path / "home"), "-w", "ws", "history", "import",
                  str(session), cwd=tmp_path)
    assert done.returncode == 1 and "--from" not in done.stderr
