"""Bad input: garbage lines, a 2 MiB line, invalid UTF-8, hostile receipts, bad ids."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from segue import HistoryStore, Layout, make_row
from segue._errors import InvalidWorkspaceId, LockTimeout
from segue._history import read_receipt, receipt_matches
from segue._history.lock import hold
from segue._history.scan import scan_backward, scan_forward

RESET_2MIB = (
    b'{"id":"r","role":"assistant","metadata":{"contextBoundaryKind":"reset","pad":"'
    + b"x" * (2 << 20)
    + b'"},"parts":[]}'
)


def _store(home: Path) -> HistoryStore:
    store = HistoryStore(Layout(home, "ws"), durable=False)
    store.append([make_row("user", "before", id="u0")])
    return store


def test_garbage_big_and_invalid_utf8_lines_survive_byte_exact(tmp_path: Path) -> None:
    store = _store(tmp_path)
    junk = [b"not json at all", b'{"id": 1}', b"\xff\xfe\xfd invalid utf-8", RESET_2MIB]
    with open(store.layout.chat, "ab") as f:
        for line in junk:
            f.write(line + b"\n")
    before = store.layout.chat.read_bytes()
    report = store.verify()
    assert not any("torn" in p for p in report.problems)
    lines = [w for w in report.warnings if " line " in w]
    assert len(lines) == 4  # three unparseable lines, one oversized
    # appending outside the store is an untracked change, not damage
    assert report.problems == []
    assert any("untracked append" in w for w in report.warnings)
    # the writer keeps them, and readers skip them
    store.append([make_row("user", "after", id="u1")])
    assert store.layout.chat.read_bytes().startswith(before)
    assert [r.id for r in store.rows()] == ["u0", "u1"]
    big = [line for line in store.lines() if line.length > 1 << 20]
    assert len(big) == 1
    assert big[0].raw is None
    assert big[0].reset_marker  # an oversized line is still recognisable as a reset row
    back = [line for line in scan_backward(store.layout.chat, "chat") if line.length > 1 << 20]
    assert back == big
    # a reset row that is the batch boundary rotates; junk before it moves byte-exact
    store.append([make_row("assistant", id="r2", metadata={"contextBoundaryKind": "reset"})])
    assert store.layout.archive.read_bytes() == before + store_line(store, "u1")
    assert store.verify().ok is True


def store_line(store: HistoryStore, row_id: str) -> bytes:
    for line in scan_forward(store.layout.archive, "archive"):
        if line.row is not None and line.row.id == row_id:
            assert line.raw is not None
            return line.raw + b"\n"
    raise AssertionError(row_id)


def test_receipt_that_is_a_symlink_is_not_trusted_nor_written_through(tmp_path: Path) -> None:
    store = _store(tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"precious")
    os.unlink(store.layout.receipt)
    os.symlink(victim, store.layout.receipt)
    assert read_receipt(store.layout) is None
    assert not store.verify().ok
    store.append([make_row("user", "x", id="u1")])
    assert victim.read_bytes() == b"precious"
    assert not store.layout.receipt.is_symlink()
    assert receipt_matches(read_receipt(store.layout), store.layout)
    assert [r.id for r in store.rows()] == ["u0", "u1"]


def test_oversized_or_corrupt_or_fifo_receipt_is_not_trusted(tmp_path: Path) -> None:
    store = _store(tmp_path)
    path = store.layout.receipt
    path.write_bytes(b"{" + b" " * (1 << 20) + b"}")
    assert read_receipt(store.layout) is None
    store.append([make_row("user", "a", id="u1")])
    assert path.stat().st_size <= 4096
    good = path.read_bytes()
    path.write_bytes(good.replace(b'"stable"', b'"pendin"'))  # checksum no longer matches
    assert read_receipt(store.layout) is None
    os.unlink(path)
    os.mkfifo(path)
    assert read_receipt(store.layout) is None  # and never blocks on the FIFO
    store.append([make_row("user", "b", id="u2")])
    assert read_receipt(store.layout) is not None
    assert [r.sequence for r in store.rows()] == [0, 1, 2]
    assert store.verify().ok


@pytest.mark.parametrize("bad", ["", "a/b", "..", "x" * 65, "sp ace", "é"])
def test_bad_workspace_id_is_a_clear_error(tmp_path: Path, bad: str) -> None:
    with pytest.raises(InvalidWorkspaceId, match="invalid workspace id"):
        HistoryStore(Layout(tmp_path, bad))


def test_lock_timeout_names_the_path_and_lock_is_reentrant(tmp_path: Path) -> None:
    import subprocess
    import sys

    layout = Layout(tmp_path, "ws")
    store = HistoryStore(layout, lock_timeout=0.2)
    # re-entrant in one process, across instances too
    with store.locked(), store.locked(), HistoryStore(layout).locked():
        pass
    code = (
        "import sys,time; from pathlib import Path; from segue._history.lock import hold\n"
        "with hold(Path(sys.argv[1]), 5):\n"
        "    print('held', flush=True); sys.stdin.readline()\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", code, str(layout.lock)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == b"held\n"
        with pytest.raises(LockTimeout, match=str(layout.lock)):
            store.append([make_row("user", "x", id="x")])
    finally:
        assert holder.stdin is not None
        holder.stdin.write(b"\n")
        holder.stdin.close()
        holder.wait()
        assert holder.stdout is not None
        holder.stdout.close()
    assert layout.lock.exists()  # never unlinked
    with hold(layout.lock, 1):
        pass
