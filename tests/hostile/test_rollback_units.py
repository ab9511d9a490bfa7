"""The full-disk paths of the store without a tmpfs (so they run wherever the tests run):
an OS error injected in the middle of a batch write, and in the middle of a rotation."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from segue import HistoryStore, Layout, make_row
from segue._errors import FileError
from segue._history import store as store_module
from segue._history.rotation import ROTATE_TEMP


def _store(tmp_path: Path) -> HistoryStore:
    store = HistoryStore(Layout(tmp_path, "ws"))
    store.append([make_row("user", f"row {i}", id=f"u{i}") for i in range(3)])
    return store


def test_a_batch_cut_short_by_a_full_disk_is_not_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(tmp_path)
    before = store.layout.chat.read_bytes()

    def half_then_full(fd: int, data: bytes) -> None:
        os.write(fd, data[: len(data) // 2])  # some of it lands, as on a real full disk
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(store_module, "write_all", half_then_full)
    with pytest.raises(FileError, match=f"no space left on device at {store.layout.chat}"):
        store.append([make_row("user", "x" * 5000, id=f"big{i}") for i in range(4)])
    monkeypatch.undo()
    assert store.layout.chat.read_bytes() == before
    assert store.verify().ok
    assert [r.sequence for r in store.append([make_row("user", "next", id="n")])] == [3]


def test_a_rotation_cut_short_by_a_full_disk_keeps_the_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(tmp_path)
    real_replace = os.replace

    def full(src: str, dst: str) -> None:
        if str(src).endswith(ROTATE_TEMP):
            raise OSError(errno.ENOSPC, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", full)
    reset = make_row("assistant", id="r", metadata={"contextBoundaryKind": "reset"})
    stored = store.append([reset, make_row("user", "after", id="a")])
    monkeypatch.undo()
    assert [r.id for r in stored] == ["r", "a"]  # accepted, not reported as failed
    assert [r.id for r in store.rows()] == ["u0", "u1", "u2", "r", "a"]
    assert not store.layout.archive.exists() or store.layout.archive.stat().st_size == 0
    assert sorted(p.name for p in store.layout.session_dir.iterdir() if p.name[0] == ".") == []
    assert store.verify().ok
    # the next boundary batch rotates everything before it
    store.append([make_row("assistant", id="r2", metadata={"contextBoundaryKind": "reset"})])
    assert [r.id for r in store.rows()] == ["u0", "u1", "u2", "r", "a", "r2"]
    assert store.layout.archive.stat().st_size > 0
    assert store.verify().ok
