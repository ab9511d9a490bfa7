"""Paths that are not plain files: a directory, a FIFO, a symbolic link to a file outside
the session, a device node, at every path segue reads or writes. segue must not hang, not
crash, never write through the link and never replace the node; a file it cannot use is
one error line naming the path."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.hostile.harness import (
    READ_COMMANDS,
    WS,
    changed,
    clean,
    fault,
    one_error,
    reset_row,
    row,
    seed,
    segue,
    session,
    snapshot,
)
from tests.needs import unavailable

VICTIM = b'{"id":"victim","role":"user","parts":[],"metadata":{}}\n'


def _paths(home: Path) -> dict[str, Path]:
    s = session(home)
    lock = next((home / "locks").iterdir())
    return {
        "chat": s / "chat.jsonl",
        "archive": s / "chat-archive.jsonl",
        "receipt": s / "history-append-provenance.json",
        "journal": s / "history-append-journal.json",
        "marker": s / "history-transaction.json",
        "index": s / "history-index.sqlite",
        "lock": lock,
        "settings": home / "settings.json",
    }


def _make(kind: str, path: Path, victim: Path) -> None:
    if path.is_dir():
        path.rmdir()
    elif path.exists() or path.is_symlink():
        path.unlink()
    if kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "symlink":
        path.symlink_to(victim)
    else:
        dev = os.makedev(1, 5) if kind == "zero-device" else os.makedev(1, 3)
        try:
            os.mknod(path, 0o666 | stat.S_IFCHR, dev)
        except PermissionError:
            unavailable("cannot create a device node here (needs root)")


SPECIAL_READS = tuple(
    args for args in READ_COMMANDS if args[-1] not in ("--json", "md", "html", "w:0")
)
KINDS = ("directory", "fifo", "symlink", "null-device")
TARGETS = ("chat", "archive", "receipt", "marker", "index", "lock", "settings")
#: (target, kind) pairs: every kind at every path, plus /dev/zero as the settings file
#: (an endless read, which must not be loaded).
CASES = [(t, k) for t in TARGETS for k in KINDS] + [("settings", "zero-device")]
WRITES: tuple[Callable[[Path], tuple[str, ...]], ...] = (
    lambda extra: ("history", "import", str(extra)),
    lambda extra: ("settings", "set", "experiments.tokenBudget", "true"),
)
#: segue's own bookkeeping files, which a writer replaces atomically (never writing through
#: them) when they are not what segue wrote: the receipt (R29) and a transaction marker
#: that cannot be read (moved aside, R34).
REPLACEABLE = ("receipt", "marker")


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    rows = [row(0), row(1), reset_row(2), row(3), row(4)]
    seed(home, rows, tmp_path / "scratch")  # a boundary in the batch: an archive exists
    (home / "settings.json").write_text('{"experiments": {"tokenBudget": false}}\n')
    return home


@pytest.mark.parametrize(("target", "kind"), CASES)
def test_reads_never_hang_crash_or_change_anything(tmp_path: Path, target: str, kind: str) -> None:
    home = _home(tmp_path)
    victim = tmp_path / "victim.jsonl"
    victim.write_bytes(VICTIM)
    path = _paths(home)[target]
    _make(kind, path, victim)
    before = snapshot(tmp_path)
    for args in SPECIAL_READS:
        fault(f"{target} as {kind}: {' '.join(args)}")
        r = clean(segue(home, *args), codes=(0, 1, 2))
        if target in ("chat", "archive") and args[0] == "history" and r.code:
            assert str(path) in r.err or r.out, r.err  # the error names the path
        if args[:2] == ("history", "tool"):
            # never an answer from around an unreadable file: the floor may be in it (R11)
            assert b"message 0" not in r.out
            assert b"message 1" not in r.out
    assert changed(before, snapshot(tmp_path)) == []


@pytest.mark.parametrize(("target", "kind"), CASES)
def test_writes_never_go_through_a_link_or_replace_a_node(
    tmp_path: Path, target: str, kind: str
) -> None:
    home = _home(tmp_path)
    victim = tmp_path / "victim.jsonl"
    victim.write_bytes(VICTIM)
    extra = tmp_path / "extra.jsonl"
    extra.write_bytes(b'{"id":"x","role":"user","parts":[],"metadata":{}}\n')
    path = _paths(home)[target]
    _make(kind, path, victim)
    mode = stat.S_IFMT(os.lstat(path).st_mode)
    outside = snapshot(tmp_path, skip=(home,))
    for make in WRITES:
        args = make(extra)
        fault(f"{target} as {kind}: {' '.join(args)}")
        r = clean(segue(home, *args), codes=(0, 1, 2))
        if r.code:
            assert one_error(r, code=r.code)
        if target in ("chat", "archive", "lock") and args[0] == "history":
            assert r.code == 1
            assert str(path) in r.err
        if target == "settings" and args[0] == "settings":
            assert r.code == 2
            assert str(path) in r.err
    assert changed(outside, snapshot(tmp_path, skip=(home,))) == []  # the victim included
    if target not in REPLACEABLE:
        assert stat.S_IFMT(os.lstat(path).st_mode) == mode, "the node was replaced"


@pytest.mark.parametrize("kind", ["directory", "fifo", "symlink", "null-device", "missing-dir"])
def test_export_target_that_is_not_a_regular_file(tmp_path: Path, kind: str) -> None:
    home = _home(tmp_path)
    victim = tmp_path / "victim.jsonl"
    victim.write_bytes(VICTIM)
    target = tmp_path / "out" / "export.md"
    target.parent.mkdir()
    if kind == "missing-dir":
        target = tmp_path / "no-such-dir" / "export.md"
    else:
        _make(kind, target, victim)
    before = snapshot(tmp_path)
    for fmt in ("md", "json", "html"):
        fault(f"export -o onto {kind} ({fmt})")
        r = segue(home, "history", "export", "--format", fmt, "-o", str(target))
        line = one_error(r, code=1)
        assert str(target.parent if kind == "missing-dir" else target) in line
    assert changed(before, snapshot(tmp_path)) == []


def test_export_replaces_a_regular_file_atomically(tmp_path: Path) -> None:
    home = _home(tmp_path)
    target = tmp_path / "export.json"
    target.write_bytes(b"old")
    r = segue(home, "history", "export", "--format", "json", "-o", str(target))
    assert r.code == 0, r.err
    assert b'"message 4"' in target.read_bytes()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".export")] == []


def test_workspace_session_dir_that_is_a_file(tmp_path: Path) -> None:
    home = _home(tmp_path)
    other = session(home, "other")
    other.write_bytes(b"not a directory")
    before = snapshot(tmp_path)
    for args in (("history", "windows"), ("history", "verify")):
        fault(f"session dir as a file: {' '.join(args)}")
        r = clean(segue(home, *args, ws="other"))
        assert r.code == 1
        assert str(other) in one_error(r)
    assert changed(before, snapshot(tmp_path)) == []
    assert WS
