"""Issue case 5 (SPEC.md R38): the home is 0700 and every file segue writes is 0600 whatever
the umask, exports included; a wider home is tightened on the next write and reported by
``segue history verify``."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from tests.security.helpers import WORKSPACE, bash, run, segue_cmd


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def _files(home: Path) -> list[Path]:
    return [p for p in home.rglob("*") if p.is_file() and not p.is_symlink()]


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077, 0o000])
def test_home_and_files_are_private_whatever_the_umask(tmp_path: Path, umask: int) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    run(tmp_path, [bash("echo hi")], approve="full", umask=umask)
    assert segue_cmd(home, work, "settings", "set", "approval", "ask", umask=umask).returncode == 0
    session = home / "sessions" / WORKSPACE
    assert _mode(home) == 0o700
    assert _mode(session) == 0o700
    for name in ("chat.jsonl", "history-append-provenance.json"):
        assert _mode(session / name) == 0o600, name
    assert _mode(home / "settings.json") == 0o600
    wide = [p for p in _files(home) if _mode(p) & 0o077 and "providers" not in p.parts]
    assert wide == []
    export = tmp_path / "out.md"
    proc = segue_cmd(home, work, "history", "export", "-o", str(export), umask=umask)
    assert proc.returncode == 0, proc.stderr
    assert _mode(export) == 0o600


def test_an_export_over_a_wider_file_becomes_private(tmp_path: Path) -> None:
    run(tmp_path, [bash("echo hi")], approve="full")
    export = tmp_path / "out.md"
    export.write_text("old")
    export.chmod(0o644)
    proc = segue_cmd(tmp_path / "home", tmp_path / "work", "history", "export", "-o", str(export))
    assert proc.returncode == 0, proc.stderr
    assert _mode(export) == 0o600 and "old" not in export.read_text()


def test_a_wider_home_is_reported_then_tightened_on_the_next_write(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    run(tmp_path, [bash("echo hi")], approve="full")
    session = home / "sessions" / WORKSPACE
    home.chmod(0o755)
    session.chmod(0o755)
    (session / "chat.jsonl").chmod(0o644)
    verify = segue_cmd(home, work, "history", "verify")
    assert verify.returncode == 0, verify.stderr
    assert f"{home} is mode 0755" in verify.stdout
    assert f"{session / 'chat.jsonl'} is mode 0644" in verify.stdout
    segue_cmd(home, work, "clear", "--yes")  # a write
    assert (_mode(home), _mode(session)) == (0o700, 0o700)
    files = [p for p in session.iterdir() if p.is_file()]
    assert files and [p.name for p in files if _mode(p) != 0o600] == []
    again = segue_cmd(home, work, "history", "verify")
    assert "mode 07" not in again.stdout and "mode 06" not in again.stdout
