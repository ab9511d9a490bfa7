"""Homes (SPEC.md §3 "Homes"): segue reads a Xum home when pointed at it and never changes
a session that Xum may be streaming into.

Black box: real ``segue`` processes against a home laid out as Xum lays it out
(``sessions/<id>/chat.jsonl`` plus a ``partial.json`` newer than the transcript). Every file
under the home is snapshotted (path, bytes, mode, mtime) before and after each command.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from segue._workspace import default_home

WS = "xum-ws"
#: Xum's own sample, used where the shared samples sit beside the checkout (it is AGPL: read
#: in place, never copied into the project).
SHARED_SAMPLE = Path(__file__).resolve().parents[3] / "shared/samples/xum-session/chat.jsonl"


def _own_fixture() -> bytes:
    """Rows in the shape Xum writes (SPEC.md §3), written for this test."""
    rows = [
        {"id": "u1", "role": "user", "metadata": {"timestamp": 1700000010000,
         "historySequence": 0}, "parts": [{"type": "text", "text": "Where is the parser?",
         "state": "done"}], "workspaceId": WS},
        {"id": "a1", "role": "assistant", "metadata": {"timestamp": 1700000012000,
         "model": "anthropic:claude-sonnet-4-5", "historySequence": 1}, "parts": [
         {"type": "text", "text": "It lives in src/parse/grammar.ts.", "state": "done"}],
         "workspaceId": WS},
    ]
    return b"".join(json.dumps(r, separators=(",", ":")).encode() + b"\n" for r in rows)


def _transcripts() -> list[Any]:
    found: list[Any] = [pytest.param(_own_fixture(), "grammar.ts", id="own-fixture")]
    if SHARED_SAMPLE.exists():
        found.append(pytest.param(SHARED_SAMPLE.read_bytes(), "preload", id="xum-sample"))
    return found


def _xum_home(root: Path, transcript: bytes) -> Path:
    home = root / "xum-home"
    session = home / "sessions" / WS
    session.mkdir(parents=True)
    chat = session / "chat.jsonl"
    chat.write_bytes(transcript)
    os.utime(chat, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
    partial = session / "partial.json"
    partial.write_text('{"id":"assistant-9","role":"assistant","parts":[]}')  # newer
    return home


def _snapshot(home: Path) -> dict[str, tuple[bytes | None, int, int]]:
    out: dict[str, tuple[bytes | None, int, int]] = {}
    for path in sorted(home.rglob("*")):
        st = path.lstat()
        data = path.read_bytes() if path.is_file() else None
        out[str(path.relative_to(home))] = (data, st.st_mode, st.st_mtime_ns)
    return out


def _segue(home: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "SEGUE_HOME"}
    return subprocess.run(
        [sys.executable, "-m", "segue", "--home", str(home), "-w", WS, *args],
        capture_output=True, text=True, timeout=60, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
        check=False,
    )


@pytest.mark.parametrize(("transcript", "needle"), _transcripts())
def test_reads_of_a_xum_home_work_and_change_nothing(
    tmp_path: Path, transcript: bytes, needle: str
) -> None:
    home = _xum_home(tmp_path, transcript)
    before = _snapshot(home)
    windows = _segue(home, "history", "windows", "--json")
    assert windows.returncode == 0, windows.stderr
    assert [w["windowId"] for w in json.loads(windows.stdout)["windows"]] == ["w:0"]
    found = _segue(home, "history", "search", needle)
    assert found.returncode == 0, found.stderr
    assert needle in found.stdout
    exported = _segue(home, "history", "export", "--format", "json")
    assert exported.returncode == 0, exported.stderr
    assert needle in exported.stdout
    assert _snapshot(home) == before, "a read changed the Xum home"


@pytest.mark.parametrize(
    "command",
    [
        ("clear", "--soft"),
        ("clear", "--yes"),
        ("history", "import", "IMPORT"),
        ("history", "import", "--from", "claude-code", "IMPORT"),
        ("run", "-m", "MODEL", "hello"),
        ("compact", "-m", "MODEL"),
    ],
)
def test_every_mutation_of_a_streaming_session_is_refused(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    home = _xum_home(tmp_path, _own_fixture())
    extra = tmp_path / "import.jsonl"
    extra.write_bytes(_own_fixture())
    model = tmp_path / "script.json"
    model.write_text(json.dumps({"contextWindow": 8000, "encoding": "o200k_base",
                                 "responses": [{"text": "never sent"}]}))
    args = [a.replace("IMPORT", str(extra)).replace("MODEL", f"scripted:{model}")
            for a in command]
    work = tmp_path / "work"
    work.mkdir()
    before = _snapshot(home)
    result = _segue(home, *args, cwd=work)
    assert result.returncode == 1, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "partial.json" in lines[0]
    assert "Traceback" not in result.stderr
    assert _snapshot(home) == before, "a refused command wrote under the home"
    assert not (home / "locks").exists()


def test_a_finished_stream_no_longer_blocks(tmp_path: Path) -> None:
    """A partial.json older than the transcript is a leftover, not a stream: segue may write."""
    home = _xum_home(tmp_path, _own_fixture())
    session = home / "sessions" / WS
    os.utime(session / "partial.json", ns=(1_600_000_000_000_000_000,) * 2)
    result = _segue(home, "clear", "--soft")
    assert result.returncode == 0, result.stderr
    assert (session / "partial.json").read_text().startswith('{"id":"assistant-9"')


def test_default_home_is_segues_own(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("SEGUE_HOME", raising=False)
    monkeypatch.setenv("XUM_HOME", str(tmp_path / "xum"))  # another tool's variable: ignored
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_home() == tmp_path / ".segue"
    monkeypatch.setenv("SEGUE_HOME", str(tmp_path / "mine"))
    assert default_home() == tmp_path / "mine"
