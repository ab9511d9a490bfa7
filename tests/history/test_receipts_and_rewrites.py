"""Receipt epochs (R29) and interrupted rotations/rewrites (R34), step by step."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from segue import HistoryStore, Layout, make_row
from segue._history import read_receipt, receipt_matches
from segue._history.marker import marker_path, read_marker
from segue._history.rotation import ROTATE_TEMP
from segue._history.visibility import visible_bounds
from tests.history.helpers import check_batches_whole


def _row(n: int, tag: str = "t") -> list:  # type: ignore[type-arg]
    return [make_row("user", f"text {n}", id=f"{tag}-{n}-0-of-1")]


def _reset(n: int) -> list:  # type: ignore[type-arg]
    return [
        make_row("assistant", id=f"t-{n}-0-of-2", metadata={"contextBoundaryKind": "reset"}),
        make_row("user", "after", id=f"t-{n}-1-of-2"),
    ]


def test_epoch_kept_by_verified_appends_and_changed_by_everything_else(tmp_path: Path) -> None:
    store = HistoryStore(Layout(tmp_path, "ws"), durable=False)
    store.append(_row(0))
    first = read_receipt(store.layout)
    assert first is not None
    assert first.state == "stable"
    assert receipt_matches(first, store.layout)
    store.append(_row(1))
    second = read_receipt(store.layout)
    assert second is not None
    assert second.epoch == first.epoch  # verified append: same epoch
    assert second.chat != first.chat  # but bound to the new stamps
    assert not receipt_matches(first, store.layout)
    store.append(_reset(2))  # rotation: a rewrite
    third = read_receipt(store.layout)
    assert third is not None
    assert third.epoch != second.epoch
    store.quarantine("1")
    fourth = read_receipt(store.layout)
    assert fourth is not None
    assert fourth.epoch != third.epoch
    # an untracked change (someone else appends) is never adopted as the same epoch
    with open(store.layout.chat, "ab") as f:
        f.write(b'{"id":"ext","role":"user","parts":[],"metadata":{}}\n')
    assert not receipt_matches(read_receipt(store.layout), store.layout)
    store.append(_row(5))
    fifth = read_receipt(store.layout)
    assert fifth is not None
    assert fifth.epoch != fourth.epoch
    assert receipt_matches(fifth, store.layout)
    store.clear_all()
    sixth = read_receipt(store.layout)
    assert sixth is not None
    assert (sixth.epoch != fifth.epoch, sixth.chat, sixth.archive) == (True, None, None)
    assert read_receipt(store.layout).state == "stable"  # type: ignore[union-attr]


@pytest.mark.parametrize("stage", ["marker", "archive", "chat-replaced"])
def test_interrupted_rotation_never_duplicates_or_loses(tmp_path: Path, stage: str) -> None:
    """Crash a rotation after each of its steps by replaying the steps by hand."""
    layout = Layout(tmp_path, "ws")
    store = HistoryStore(layout, durable=False)
    for n in range(3):
        store.append(_row(n))
    reference = HistoryStore(Layout(tmp_path / "ref", "ws"), durable=False)
    for n in range(3):
        reference.append(_row(n))
    reference.append(_reset(3))
    # the real rotation, stopped after one of its steps by a simulated crash
    from segue._fsutil import atomic_write as real_atomic
    from segue._history import rotation
    from segue._history.marker import write_marker as real_write_marker

    class Crash(Exception):
        pass

    def atomic(*args: object, **kw: object) -> None:
        if stage == "archive":
            raise Crash
        real_atomic(*args, **kw)  # type: ignore[arg-type]

    def remove(*args: object, **kw: object) -> None:
        raise Crash

    def write_marker(*args: object, **kw: object) -> None:
        real_write_marker(*args, **kw)  # type: ignore[arg-type]
        if stage == "marker":
            raise Crash

    mp = pytest.MonkeyPatch()
    mp.setattr(rotation, "write_marker", write_marker)
    mp.setattr(rotation, "atomic_write", atomic)
    mp.setattr(rotation, "remove_marker", remove)
    try:
        with pytest.raises(Crash):
            store.append(_reset(3))
    finally:
        mp.undo()
    assert read_marker(layout) is not None
    # before recovery, readers see each row once
    assert [r.id for r in store.rows()] == [r.id for r in reference.rows()]
    assert not store.verify().ok
    report = store.recover()
    assert report.actions
    assert not report.problems
    assert not marker_path(layout).exists()
    assert not (layout.session_dir / ROTATE_TEMP).exists()
    check_batches_whole(store.rows())
    assert [r.id for r in store.rows()] == [r.id for r in reference.rows()]
    assert layout.archive.read_bytes() == reference.layout.archive.read_bytes()
    assert layout.chat.read_bytes() == reference.layout.chat.read_bytes()
    assert store.verify().ok
    bounds = visible_bounds(layout)
    assert bounds.chat_end == os.path.getsize(layout.chat)
