"""Another user's files: a lock file or session directory owned by someone else, mode 600
or 700. A clear error naming the path and the missing access; a reader that cannot take the
lock reads without it and says so once."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.hostile.harness import (
    changed,
    fault,
    ok,
    one_error,
    row,
    seed,
    segue,
    session,
    snapshot,
)
from tests.hostile.users import give_to_runner, owner_for_foreign_files, unprivileged

READS = (
    ("history", "windows"),
    ("history", "search", "message"),
    ("history", "export", "--format", "json"),
    ("history", "verify"),
    ("history", "tool", '{"action":"search","query":"message"}'),
)


@pytest.fixture
def runner() -> tuple[str, ...]:
    prefix = unprivileged()
    if prefix is None:
        pytest.skip("cannot run segue as a user without permission overrides here")
    return prefix


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    seed(home, [row(i) for i in range(4)], tmp_path / "scratch")
    extra = tmp_path / "extra.jsonl"
    extra.write_bytes(b'{"id":"x","role":"user","parts":[],"metadata":{}}\n')
    extra.chmod(0o644)
    give_to_runner(home)
    return home


def _foreign(path: Path, mode: int) -> None:
    os.chown(path, owner_for_foreign_files(), owner_for_foreign_files())
    path.chmod(mode)


def test_a_lock_file_of_another_user(tmp_path: Path, runner: tuple[str, ...]) -> None:
    home = _home(tmp_path)
    lock = next((home / "locks").iterdir())
    _foreign(lock, 0o600)
    before = snapshot(tmp_path)
    for args in READS:
        fault(f"foreign lock: {' '.join(args)}")
        r = ok(segue(home, *args, prefix=runner))
        notes = [line for line in r.err.splitlines() if line.startswith("segue: note:")]
        assert len(notes) == 1
        assert str(lock) in notes[0]
    fault("foreign lock: history import")
    r = segue(home, "history", "import", str(tmp_path / "extra.jsonl"), prefix=runner)
    line = one_error(r)
    assert f"cannot open the lock for writing {lock}: permission denied" in line
    assert changed(before, snapshot(tmp_path)) == []


@pytest.mark.parametrize("what", ["session dir", "chat", "receipt"])
def test_session_files_of_another_user(tmp_path: Path, runner: tuple[str, ...], what: str) -> None:
    home = _home(tmp_path)
    s = session(home)
    path = {
        "session dir": s,
        "chat": s / "chat.jsonl",
        "receipt": s / "history-append-provenance.json",
    }[what]
    _foreign(path, 0o700 if path.is_dir() else 0o600)
    before = snapshot(tmp_path)
    for args in (*READS, ("history", "import", str(tmp_path / "extra.jsonl"))):
        fault(f"foreign {what}: {' '.join(args)}")
        r = segue(home, *args, prefix=runner)
        if args[:2] == ("history", "tool"):
            ok(r)
            assert b'"ok":false' in r.out
            assert b"permission denied" in r.out
            continue
        line = one_error(r, code=2 if args[1] == "search" else 1)  # search exits as grep
        assert "permission denied" in line
        assert str(path) in line or str(s) in line
    assert changed(before, snapshot(tmp_path)) == []
