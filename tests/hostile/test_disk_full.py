"""A full disk (ENOSPC) on a small tmpfs: one clear line, exit 1, the failed batch rolled
back before the command returns, and a failure reported only when the batch really is not
there (a rotation that cannot be done never makes an accepted batch look failed)."""

from __future__ import annotations

import errno
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.hostile.harness import (
    FIGURES,
    changed,
    exported_rows,
    fault,
    jsonl,
    ok,
    one_error,
    reset_row,
    row,
    seed,
    segue,
    session,
    snapshot,
)
from tests.needs import unavailable
from tests.scripted_cli import script

PAGE = 4096


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs (as root); skipped, saying why, where mounting is impossible."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)],
        check=False,
        capture_output=True,
    )
    if done.returncode != 0:
        unavailable(f"cannot mount a small tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False, capture_output=True)


def fill(disk: Path) -> list[Path]:
    """Fill the disk with one-page files until it is full; returns them (each frees a page)."""
    fillers: list[Path] = []
    block = b"\0" * PAGE
    for i in range(10_000):
        path = disk / f"filler-{i}"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            n = os.write(fd, block)
        except OSError as exc:
            if exc.errno != errno.ENOSPC:
                raise
            n = 0
        finally:
            os.close(fd)
        if n < PAGE:
            path.unlink()
            break
        fillers.append(path)
    assert os.statvfs(disk).f_bavail == 0
    return fillers


def free(fillers: list[Path], pages: int | None = None) -> None:
    for path in fillers[: len(fillers) if pages is None else pages]:
        path.unlink()
    del fillers[: len(fillers) if pages is None else pages]


def _seeded(
    disk: Path, tmp_path: Path, n: int, *, pad: int = 0
) -> tuple[Path, list[dict[str, Any]]]:
    home = disk / "home"
    seed(home, [row(i, f"message {i} " + "x" * pad) for i in range(n)], tmp_path / "scratch")
    return home, exported_rows(home)


def _lost(acknowledged: list[dict[str, Any]], home: Path) -> None:
    now = exported_rows(home)
    FIGURES["acknowledged batches lost"] += sum(1 for r in acknowledged if r not in now)
    assert all(r in now for r in acknowledged)


def test_an_append_that_does_not_fit_is_rolled_back(disk: Path, tmp_path: Path) -> None:
    home, acknowledged = _seeded(disk, tmp_path, 6)
    batch = tmp_path / "batch.jsonl"
    batch.write_bytes(jsonl([row(100 + i, "y" * 2000) for i in range(40)]))
    chat = session(home) / "chat.jsonl"
    # The receipt and its sidecar journal are segue's bookkeeping, republished by the rollback.
    bookkeeping = (
        session(home) / "history-append-provenance.json",
        session(home) / "history-append-journal.json",
    )
    before = snapshot(disk, skip=bookkeeping)
    fillers = fill(disk)
    fault("ENOSPC: history import")
    line = one_error(segue(home, "history", "import", str(batch)))
    assert f"no space left on device at {chat}" in line
    assert "nothing was written" in line
    # rolled back before the command returned: the transcript is as it was, bytes and all
    free(fillers)
    fresh = snapshot(disk, skip=bookkeeping)
    assert changed(before, fresh) == []
    ok(segue(home, "history", "verify"))
    _lost(acknowledged, home)
    assert len(exported_rows(home)) == 6
    # and the next append, with room, continues the sequence
    ok(segue(home, "history", "import", str(batch)))
    rows = exported_rows(home)
    assert [r["metadata"]["historySequence"] for r in rows] == list(range(46))


def test_a_first_append_on_a_full_disk(disk: Path, tmp_path: Path) -> None:
    home = disk / "home"
    (home / "sessions").mkdir(parents=True)
    batch = tmp_path / "batch.jsonl"
    batch.write_bytes(jsonl([row(i) for i in range(3)]))
    fillers = fill(disk)
    fault("ENOSPC: first import into a new workspace")
    line = one_error(segue(home, "history", "import", str(batch)))
    assert "no space left on device at" in line
    free(fillers)
    ok(segue(home, "history", "verify"))
    assert exported_rows(home) == []


def test_a_rotation_that_does_not_fit_never_fails_the_batch(disk: Path, tmp_path: Path) -> None:
    # 40 rows of 5 KB before the boundary: moving them needs ~50 pages that the disk lacks
    home, acknowledged = _seeded(disk, tmp_path, 40, pad=5000)
    archive = session(home) / "chat-archive.jsonl"
    batch = tmp_path / "boundary.jsonl"
    batch.write_bytes(jsonl([row(100), reset_row(101), row(102, "after the reset")]))
    fillers = fill(disk)
    free(fillers, 3)  # room for the batch and the rotation's marker, not for the rotation
    fault("ENOSPC: a batch whose rotation does not fit")
    r = ok(segue(home, "history", "import", str(batch)))
    assert b"Imported 3 row(s)" in r.out
    assert not archive.exists() or archive.stat().st_size == 0  # the rotation was undone
    leftovers = [p.name for p in session(home).iterdir() if p.name.startswith(".")]
    assert leftovers == []
    assert not (session(home) / "history-transaction.json").exists()
    ok(segue(home, "history", "verify"))
    rows = exported_rows(home)
    assert len(rows) == 43
    _lost([*acknowledged, *rows], home)
    # with room again, the next boundary rotates everything before it
    free(fillers)
    again = tmp_path / "again.jsonl"
    again.write_bytes(jsonl([reset_row(200), row(201)]))
    ok(segue(home, "history", "import", str(again)))
    assert archive.stat().st_size > 40 * 5000
    ok(segue(home, "history", "verify"))
    assert len(exported_rows(home)) == 45


def test_export_and_settings_on_a_full_disk(disk: Path, tmp_path: Path) -> None:
    home, _ = _seeded(disk, tmp_path, 30, pad=3000)
    out = disk / "export.md"
    settings = home / "settings.json"
    settings.write_text(json.dumps({"experiments": {"tokenBudget": False}}))
    lock = home / "settings.json.lock"  # settings set may create its own lock file
    before = snapshot(disk, skip=(lock,))
    fillers = fill(disk)
    fault("ENOSPC: history export -o")
    line = one_error(segue(home, "history", "export", "-o", str(out)))
    assert f"no space left on device at {out}" in line
    fault("ENOSPC: settings set")
    line = one_error(segue(home, "settings", "set", "experiments.tokenBudget", "true"))
    assert "no space left on device at" in line
    free(fillers)
    assert changed(before, snapshot(disk, skip=(lock,))) == []


def test_a_turn_on_a_full_disk(disk: Path, tmp_path: Path) -> None:
    """``segue run``: the user's message cannot be stored, so the turn fails cleanly, with
    its closing JSON object, and nothing half-written stays behind."""
    home, acknowledged = _seeded(disk, tmp_path, 4)
    scratch = tmp_path / "model"
    scratch.mkdir()
    model = script(scratch, [{"text": "an answer that is never needed"}])
    chat = session(home) / "chat.jsonl"
    before = chat.read_bytes()
    fillers = fill(disk)
    fault("ENOSPC: segue run")
    r = segue(home, "run", "-m", model, "--json", "x" * 20000)
    line = one_error(r)
    assert "no space left on device at" in line
    closing = json.loads(r.out.splitlines()[-1])
    assert closing["status"] == "error"
    free(fillers)
    assert chat.read_bytes() == before
    ok(segue(home, "history", "verify"))
    _lost(acknowledged, home)
