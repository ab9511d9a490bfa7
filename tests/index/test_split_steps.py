"""The background builder's steps with a forked worker (index_steps ``split``: three in four
batches of records made by the worker, as a rebuild's) make the same index as steps that
analyse every row themselves, row for row and token for token, on histories of every line
kind (windows opened in either process's batches, floors, damaged lines, a torn tail), over
several steps that each begin in the middle of the history (the ``lex`` vocabulary's ids
follow the batches its terms came in: its terms are compared)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from segue._retrieval import index_build_worker
from segue._retrieval.index_file import build_path, index_path
from segue._retrieval.index_steps import build_step
from segue._workspace import Layout
from tests.index.histories import lines_of, ops
from tests.index.test_rebuild_worker import _dump
from tests.retrieval.helpers import stamp_receipt, write_history

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def _steps(layout: Layout, step: int, *, split: bool) -> tuple[dict[str, Any], int]:
    """The index built by steps of ``step`` bytes, and how many steps forked a worker."""
    for path in (index_path(layout), build_path(layout)):
        path.unlink(missing_ok=True)
    forks = 0
    fork = os.fork

    def counted() -> int:
        nonlocal forks
        pid = fork()
        forks += pid != 0
        return pid

    os.fork = counted
    try:
        for _ in range(10_000):
            if build_step(layout, step, split=split) is not None:
                break
        else:
            raise AssertionError("the steps do not end")
    finally:
        os.fork = fork
    dump = _dump(layout)
    # lex ids follow the order its terms were first inserted in, batch by batch: the terms
    # are what search reads
    dump["lex"] = sorted(term for _, term in dump["lex"])
    return dump, forks


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    history=st.lists(ops, min_size=1, max_size=60),
    cut=st.integers(0, 60),
    size=st.integers(1, 5),
    step=st.integers(200, 4000),
    torn=st.booleans(),
)
def test_split_steps_make_the_same_index(
    monkeypatch: pytest.MonkeyPatch, history: list[Any], cut: int, size: int, step: int,
    torn: bool,
) -> None:  # fmt: skip
    monkeypatch.setattr(index_build_worker, "BATCH", size)
    with tempfile.TemporaryDirectory() as tmp:
        layout = Layout(Path(tmp), "ws")
        lines = lines_of(history)
        cut = min(cut, len(lines))
        write_history(layout, lines[:cut], lines[cut:])
        if torn and cut < len(lines):
            with layout.chat.open("ab") as f:
                f.write(b'{"id":"torn","role":"user","parts":[{"type":"text","text":"needle')
            stamp_receipt(layout)
        alone, none = _steps(layout, step, split=False)
        forked, forks = _steps(layout, step, split=True)
        assert none == 0 and forks >= 1, "the split steps did not fork their worker"
        assert alone["rows"], "nothing was indexed"
        assert forked == alone


def test_a_step_that_begins_inside_a_window_keeps_it_in_the_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Steps of a few lines, batches of one: the worker of each step starts in the window
    the steps before opened (the window state at the fork), in both processes' batches."""
    monkeypatch.setattr(index_build_worker, "BATCH", 1)
    text = (
        '{{"id":"t{0}","role":"user","metadata":{{"historySequence":{0}}},'
        '"parts":[{{"type":"text","text":"row {0} needle"}}]}}'
    )
    compaction = (
        b'{"id":"c3","role":"assistant","metadata":{"compactionBoundary":true,'
        b'"compacted":true,"compactionEpoch":1,"historySequence":3},'
        b'"parts":[{"type":"text","text":"summary"}]}'
    )
    reset = (
        b'{"id":"r16","role":"user","metadata":{"contextBoundaryKind":"reset",'
        b'"historySequence":16},"parts":[]}'
    )
    lines = [text.format(i).encode() for i in range(30)]
    lines[3], lines[16] = compaction, reset
    layout = Layout(tmp_path, "ws")
    write_history(layout, lines[:10], lines[10:])
    step = 3 * len(lines[0])  # about three lines a step
    alone, _ = _steps(layout, step, split=False)
    forked, forks = _steps(layout, step, split=True)
    assert forks > 5
    windows = {row[4] for row in alone["rows"]}
    assert len(windows) == 3, windows  # the root, the compaction's, the reset's
    assert forked == alone
