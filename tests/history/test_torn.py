"""Simulated torn writes: the last batch cut at every byte offset → deterministic recovery."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from segue import HistoryStore, Layout, make_row
from segue._history.batch import encode_batch, stamp
from segue._history.receipt import (
    AppendJournal,
    Receipt,
    current_stamps,
    read_receipt,
    write_receipt,
)

CUT_EPOCH = "0e0e0e0e-0e0e-4e0e-8e0e-0e0e0e0e0e0e"


def _history(home: Path) -> tuple[HistoryStore, bytes]:
    store = HistoryStore(Layout(home, "ws"), durable=False)
    store.append([make_row("user", "first", id="u0"), make_row("assistant", "ok é", id="a0")])
    return store, store.layout.chat.read_bytes()


def _simulate_cut(store: HistoryStore, committed: bytes, batch: bytes, cut: int) -> None:
    """The on-disk state a kill leaves when the batch write stopped after ``cut`` bytes:
    the pending receipt (with its journal) is published, then part of the batch landed."""
    layout = store.layout
    layout.chat.write_bytes(committed)
    st = os.stat(layout.chat)
    journal = AppendJournal(
        st.st_dev, st.st_ino, len(committed), len(committed) + len(batch),
        hashlib.sha256(batch).hexdigest(),
    )
    chat, archive = current_stamps(layout)
    write_receipt(layout, Receipt("pending", CUT_EPOCH, chat, archive, 99, journal), durable=False)
    with open(layout.chat, "ab") as f:
        f.write(batch[:cut])


def test_batch_cut_at_every_offset_recovers_whole_or_absent(tmp_path: Path) -> None:
    store, committed = _history(tmp_path)
    rows = [make_row("user", f"line {i} ∆", id=f"b{i}") for i in range(3)]
    batch, _ = encode_batch(stamp(rows, 2, "ws"))
    outcomes: dict[bytes, int] = {}
    for cut in range(len(batch) + 1):
        _simulate_cut(store, committed, batch, cut)
        # readers never see a partial batch, even before recovery
        visible = [r.id for r in store.rows()]
        whole = cut == len(batch)
        assert visible == (["u0", "a0", "b0", "b1", "b2"] if whole else ["u0", "a0"]), cut
        v = store.verify()
        assert not v.ok  # a pending receipt (and, if cut short, a partial batch) is damage
        assert any("partial batch" in p for p in v.problems) == (0 < cut < len(batch))
        report = store.recover()
        assert not report.problems
        after = store.layout.chat.read_bytes()
        assert after == (committed + batch if whole else committed), cut
        outcomes[after] = outcomes.get(after, 0) + 1
        assert store.verify().ok, (cut, store.verify().problems)
        receipt = read_receipt(store.layout)
        assert receipt is not None
        assert receipt.state == "stable"
        assert receipt.epoch != CUT_EPOCH  # recovery always expires cursors
        # recovery is idempotent: a second run changes nothing
        assert not store.recover().changed
    assert len(outcomes) == 2


@pytest.mark.parametrize("tail", [b"{\"id\":\"x\",\"ro", b"garbage", b"\xff\xfe"])
def test_torn_tail_without_journal_is_removed(tmp_path: Path, tail: bytes) -> None:
    store, committed = _history(tmp_path)
    with open(store.layout.chat, "ab") as f:
        f.write(tail)
    assert [r.id for r in store.rows()] == ["u0", "a0"]
    assert any("torn tail" in p for p in store.verify().problems)
    store.append([make_row("user", "next", id="n")])
    assert store.layout.chat.read_bytes().startswith(committed)
    assert [r.id for r in store.rows()] == ["u0", "a0", "n"]
    assert store.verify().ok


def test_torn_tail_mentioning_a_reset_is_sealed_not_erased(tmp_path: Path) -> None:
    store, committed = _history(tmp_path)
    tail = b'{"id":"r","role":"assistant","metadata":{"contextBoundaryKind":"re'
    with open(store.layout.chat, "ab") as f:
        f.write(tail)
    store.recover()
    assert store.layout.chat.read_bytes() == committed + tail + b"\n"
    lines = list(store.lines())
    assert lines[-1].raw == tail
    assert lines[-1].reset_marker
    assert store.verify().ok
