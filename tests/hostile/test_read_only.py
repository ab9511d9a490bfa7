"""Read commands create nothing under the home and work on a read-only home (issue 9's
read-only commands; a mounted backup or a shared read-only volume)."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hostile.harness import (
    READ_COMMANDS,
    changed,
    clean,
    fault,
    ok,
    one_error,
    row,
    seed,
    segue,
    session,
    snapshot,
)
from tests.hostile.users import unprivileged
from tests.needs import unavailable


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    seed(home, [row(i) for i in range(6)], tmp_path / "scratch")
    return home


@pytest.mark.parametrize("args", READ_COMMANDS, ids=" ".join)
def test_read_commands_create_nothing_under_a_fresh_home(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    home = tmp_path / "home"
    fault("read on a home that does not exist")
    r = segue(home, *args)
    clean(r)
    assert not home.exists(), sorted(str(p) for p in home.rglob("*"))


@pytest.mark.parametrize("args", READ_COMMANDS, ids=" ".join)
def test_read_commands_change_nothing_in_a_session(tmp_path: Path, args: tuple[str, ...]) -> None:
    home = _home(tmp_path)
    before = snapshot(home)
    fault("read of a live session")
    ok(segue(home, *args))
    assert changed(before, snapshot(home)) == []


def _mount_read_only(source: Path, target: Path) -> bool:
    target.mkdir()
    if subprocess.run(
        ["mount", "--bind", str(source), str(target)], check=False, capture_output=True
    ).returncode:
        return False
    remount = ["mount", "-o", "remount,bind,ro", str(target)]
    if subprocess.run(remount, check=False, capture_output=True).returncode:
        subprocess.run(["umount", str(target)], check=False, capture_output=True)
        return False
    return True


@pytest.fixture(params=["bind-ro", "chmod-a-w"])
def read_only_home(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[Path, tuple[str, ...]]]:
    """A seeded home that cannot be written: a read-only bind mount (as root), or a
    ``chmod -R a-w`` copy read by a user without override rights."""
    home = _home(tmp_path)
    if request.param == "bind-ro":
        target = tmp_path / "ro"
        if not _mount_read_only(home, target):
            unavailable("cannot make a read-only bind mount here (needs root and mount)")
        try:
            yield target, ()
        finally:
            subprocess.run(["umount", str(target)], check=False, capture_output=True)
        return
    prefix = unprivileged()
    if prefix is None:
        unavailable("no way to run segue without permission overrides here")
    subprocess.run(["chmod", "-R", "a-w", str(home)], check=True)
    try:
        yield home, prefix
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(home)], check=True)


@pytest.mark.parametrize("args", READ_COMMANDS, ids=" ".join)
def test_reads_work_on_a_read_only_home(
    read_only_home: tuple[Path, tuple[str, ...]], args: tuple[str, ...]
) -> None:
    home, prefix = read_only_home
    before = snapshot(home)
    fault("read on a read-only home")
    r = segue(home, *args, prefix=prefix)
    if args[:2] == ("history", "verify") and prefix:
        # chmod changed every file's ctime, which the receipt binds (R29): verify reports
        # the mismatch as damage, as it must; it still reads and answers.
        clean(r)
        assert not r.error_lines, r.err
    else:
        ok(r)
    assert r.out
    assert changed(before, snapshot(home)) == []


def test_reads_without_the_lock_file_say_so_once(
    read_only_home: tuple[Path, tuple[str, ...]], tmp_path: Path
) -> None:
    """A copied Xum session has no segue lock: readers read without it and say so once."""
    home, prefix = read_only_home
    copy = tmp_path / "nolock"
    shutil.copytree(home, copy, symlinks=True)
    subprocess.run(["chmod", "-R", "u+w", str(copy)], check=True)
    shutil.rmtree(copy / "locks")
    subprocess.run(["chmod", "-R", "a-w", str(copy)], check=True)
    try:
        before = snapshot(copy)
        fault("read without a lock file")
        r = ok(segue(copy, "history", "export", "--format", "json", prefix=prefix))
        notes = [line for line in r.err.splitlines() if line.startswith("segue: note:")]
        assert len(notes) == 1, r.err
        assert "lock" in notes[0]
        assert b'"message 5"' in r.out
        assert changed(before, snapshot(copy)) == []
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(copy)], check=True)


def test_a_write_on_a_read_only_home_is_one_clear_line(
    read_only_home: tuple[Path, tuple[str, ...]], tmp_path: Path
) -> None:
    home, prefix = read_only_home
    extra = tmp_path / "extra.jsonl"
    extra.write_bytes(b'{"id":"x","role":"user","parts":[],"metadata":{}}\n')
    extra.chmod(0o644)
    before = snapshot(home)
    for args in (
        ("history", "import", str(extra)),
        ("settings", "set", "experiments.tokenBudget", "true"),
    ):
        fault("write on a read-only home")
        r = segue(home, *args, prefix=prefix)
        line = one_error(r, code=r.code)
        assert r.code in (1, 2)
        assert str(home) in line
    assert changed(before, snapshot(home)) == []
    assert session(home).is_dir()


def test_reads_of_a_xum_like_home_create_nothing(tmp_path: Path) -> None:
    """A home segue never wrote (a Xum home: a transcript, no receipt, no locks folder):
    every read command answers and leaves no file or folder behind."""
    home = tmp_path / "xum-home"
    s = session(home)
    s.mkdir(parents=True)
    rows = [row(i, f"message {i}") | {"metadata": {"historySequence": i}} for i in range(3)]
    (s / "chat.jsonl").write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in rows))
    before = snapshot(home)
    for args in READ_COMMANDS:
        fault(f"read of a Xum-like home: {' '.join(args)}")
        ok(segue(home, *args))
    assert changed(before, snapshot(home)) == []
    assert not (home / "locks").exists()
