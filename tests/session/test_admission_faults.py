"""Fail-closed rollover admission (R21, R5, R7).

A failure (an exception from the Session's ``checkpoint`` hook) or a cancellation
(``session.cancellation.cancel()`` from the hook) is injected at every step of admission
(``prepare``, ``fit``, ``cleanup``, ``append``), a provider error at the send that follows
the append, and a store failure inside the append itself, for the three ways a window rolls
over (on send, mid-stream at a settled tool step, and the context-exceeded backstop).

After each, the transcript (``chat-archive.jsonl`` ++ ``chat.jsonl``, compared byte for byte
with what was on disk when admission started) is either untouched or grown by exactly the
complete batch (strict rollover boundary, lead-in, trigger; contiguous). Carryover is observed
in both its forms: the context-scoped cache (``Session._context_cache``) and the persisted
edited-file carryover (``carryover.json``, with one pending edit). Both must survive a failure
before cleanup untouched, and both must already be handed over (cache empty, carryover keyed
to the new boundary with no pending edits) when a rollover batch reaches the store, so no
fresh window is ever published with stale carryover.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pytest

import segue._history.store as store_module
from segue import HistoryStore, Layout, Row, Session, decode_row, make_row
from segue._errors import FileError, StoreError
from segue._messages import row_from_obj
from segue._session.window import load_window
from segue._tools.carryover import Carryover
from segue._tools.carryover_file import carryover_path
from tests.front import (
    CONTINUATION_TYPE,
    LEAD_IN_TYPE,
    is_rollover_boundary,
    is_synthetic_continuation,
)
from tests.session.helpers import Harness, echo, harness

WINDOW = 8000  # hard ceiling 6000; threshold 50 rolls over at 4400
THRESHOLD = 50
PHASES = ("prepare", "fit", "cleanup", "append")
Kind = Literal["on-send", "mid-stream", "context-exceeded"]
KINDS: tuple[Kind, ...] = ("on-send", "mid-stream", "context-exceeded")
CARRYOVER = {"carryover": "edited files of the old window"}
PROMPT = "the new question"
EDITED = "edited.txt"


class InjectedFault(Exception):
    """What the checkpoint hook raises: an arbitrary failure inside admission."""


def carryover_bytes(layout: Layout) -> bytes:
    path = carryover_path(layout)
    return path.read_bytes() if path.exists() else b""


def transcript_bytes(layout: Layout) -> bytes:
    """The whole transcript history as bytes: archive then active epoch (SPEC.md §1)."""
    return b"".join(p.read_bytes() for p in (layout.archive, layout.chat) if p.exists())


@dataclass
class Injector:
    """The Session's checkpoint hook: snapshots the transcript when admission starts and
    injects a failure or a cancellation at one named step."""

    layout: Layout
    phase: str | None
    action: Literal["raise", "cancel"] = "raise"
    session: Session | None = None
    snapshot: bytes | None = None
    carryover_snapshot: bytes | None = None
    seen: list[str] = field(default_factory=list)

    def __call__(self, name: str) -> None:
        self.seen.append(name)
        if name == "prepare":
            self.snapshot = transcript_bytes(self.layout)
            self.carryover_snapshot = carryover_bytes(self.layout)
        if name != self.phase:
            return
        if self.action == "raise":
            raise InjectedFault(f"injected at {name}")
        assert self.session is not None
        self.session.cancellation.cancel()


class ObservedStore(HistoryStore):
    """A real store that records the session's carryover at the moment a rollover batch is
    appended, and can fail that append before writing anything."""

    def __init__(self, layout: Layout, *, fail_rollover: bool = False) -> None:
        super().__init__(layout, durable=False)
        self.fail_rollover = fail_rollover
        self.session: Session | None = None
        self.carryover_at_rollover: list[dict[str, Any]] = []
        self.persisted_at_rollover: list[Carryover] = []

    def append(self, rows: Sequence[Row]) -> list[Row]:
        if any(is_rollover_boundary(r) for r in rows):
            assert self.session is not None
            self.carryover_at_rollover.append(dict(self.session._context_cache))
            self.persisted_at_rollover.append(self.session.carryover.load())
            if self.fail_rollover:
                raise StoreError("injected: no space left on device", path=self.layout.chat)
        return super().append(rows)


def filler(word: str, n: int) -> str:
    return " ".join([word] * n)


def scenario(tmp: Path, kind: Kind, after: list[dict[str, Any]]) -> Harness:
    """A harness whose next send rolls over by ``kind``; ``after`` answers in the new window
    (plus one spare answer for a follow-up send)."""
    spare = [{"text": "follow-up answer"}]
    if kind == "on-send":
        h = harness(tmp, [*after, *spare], context_window=WINDOW)
        prime(h, [("user", filler("old", 2000)), ("assistant", filler("reply", 2000))])
    elif kind == "mid-stream":
        # The reported usage of the tool step puts the settled projection over the trigger.
        big_step = {
            "toolCalls": [echo("alpha", 3)],
            "usage": {"inputTokens": 5000, "outputTokens": 10},
        }
        h = harness(tmp, [big_step, *after, *spare], context_window=WINDOW)
    else:
        h = harness(
            tmp, [{"error": {"kind": "context_overflow"}}, *after, *spare], context_window=WINDOW
        )
        prime(h, [("user", "earlier work"), ("assistant", "done earlier")])
    return h


def prime(h: Harness, rows: list[tuple[Literal["user", "assistant"], str]]) -> None:
    h.store.append([make_row(role, text, id=f"p{i}") for i, (role, text) in enumerate(rows)])


def observed(h: Harness, injector: Injector, *, fail_rollover: bool = False) -> Session:
    store = ObservedStore(h.layout, fail_rollover=fail_rollover)
    h.store = store
    session = h.session(threshold=THRESHOLD, checkpoint=injector)
    injector.session = session
    store.session = session
    session._context_cache.update(CARRYOVER)
    # One pending edited file in the persisted carryover of the window about to be sealed.
    (h.workdir / EDITED).write_text("edited in the old window\n")
    session.carryover.record_edit(h.workdir, EDITED)
    return session


def assert_handed_over(store: ObservedStore, boundary: Row) -> None:
    """At the moment the batch reached the store, all carryover was already handed over."""
    assert store.carryover_at_rollover == [{}]
    (persisted,) = store.persisted_at_rollover
    assert persisted.edits == ()
    assert persisted.carried is not None and persisted.carried.boundary_id == boundary.id
    assert [f.path for f in persisted.carried.files] == [EDITED]


def added_rows(before: bytes, after: bytes) -> list[Row]:
    """The rows appended since ``before``; fails unless ``after`` extends it exactly."""
    assert after.startswith(before), "the transcript before the rollover was rewritten"
    return [decode_row(line) for line in after[len(before) :].splitlines()]


def assert_complete_batch(rows: list[Row], kind: Kind) -> None:
    """Exactly one batch: boundary, lead-in, trigger, and after a mid-stream rollover the
    copies of the step that caused it; contiguous, strict, nothing else."""
    boundary, lead_in, trigger, *copies = rows
    assert len(rows) == 3 or (kind == "mid-stream" and copies), [r.mux_type or r.role for r in rows]
    assert all(c.flag("rlmPreservedTailCopy") and c.flag("synthetic") for c in copies)
    assert is_rollover_boundary(boundary)
    reason = boundary.metadata["muxMetadata"]["reason"]
    assert reason == kind
    assert lead_in.mux_type == LEAD_IN_TYPE
    assert f"w:{boundary.sequence}" in lead_in.text
    if kind == "on-send":
        assert trigger.mux_type == CONTINUATION_TYPE and trigger.text == PROMPT
        assert not trigger.flag("synthetic")
    else:
        assert is_synthetic_continuation(trigger)
    first = boundary.sequence
    assert first is not None
    assert [r.sequence for r in rows] == list(range(first, first + len(rows)))


def send_with_fault(session: Session, injector: Injector) -> str:
    """Run the send; returns how it ended ("raised" or the TurnResult status)."""
    if injector.action == "raise":
        with pytest.raises(InjectedFault):
            session.send(PROMPT)
        return "raised"
    result = session.send(PROMPT)
    assert result.status == "paused"
    assert result.reason is not None and "cancelled" in result.reason
    return result.status


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("phase", PHASES)
@pytest.mark.parametrize("action", ["raise", "cancel"])
def test_fault_at_each_admission_step_is_all_or_nothing(
    tmp_path: Path, kind: Kind, phase: str, action: Literal["raise", "cancel"]
) -> None:
    h = scenario(tmp_path, kind, [{"text": "answered in the new window"}])
    injector = Injector(h.layout, phase, action)
    session = observed(h, injector)

    send_with_fault(session, injector)

    assert phase in injector.seen, "the fault point was never reached"
    assert injector.snapshot is not None
    after = transcript_bytes(h.layout)
    store = h.store
    assert isinstance(store, ObservedStore)
    if action == "raise" or phase != "append":
        # R21: a failure anywhere in admission, and a cancellation made before the final
        # check ahead of the append, both leave the transcript as it was.
        assert after == injector.snapshot
    if after == injector.snapshot:
        # Untouched: the old window stays open, nothing of the new one reached the provider.
        assert len(h.requests()) == requests_before_admission(kind)
        assert not any(is_rollover_boundary(r) for r in h.rows())
        if kind == "on-send":
            assert PROMPT not in [r.text for r in h.rows()]
        if phase in ("prepare", "fit") or (phase == "cleanup" and action == "raise"):
            # Failed before cleanup: the current window's state is untouched too.
            assert session._context_cache == CARRYOVER
            assert carryover_bytes(h.layout) == injector.carryover_snapshot
    else:
        batch = added_rows(injector.snapshot, after)
        assert_complete_batch(batch, kind)
        # The batch was published with carryover already handed over, and nothing after it.
        assert_handed_over(store, batch[0])
        assert session._context_cache == {}
        new_window = load_window_of(h)
        assert [r.mux_type for r in new_window][:2] == ["context-window-rollover", LEAD_IN_TYPE]
    # Whatever happened, no window was ever opened with carryover still in place.
    assert all(c == {} for c in store.carryover_at_rollover)


def load_window_of(h: Harness) -> list[Row]:
    return load_window(HistoryStore(h.layout, durable=False))


def requests_before_admission(kind: Kind) -> int:
    """Provider requests a send makes before its rollover is admitted."""
    return 0 if kind == "on-send" else 1


@pytest.mark.parametrize("kind", KINDS)
def test_provider_error_at_the_send_after_the_append_keeps_the_whole_batch(
    tmp_path: Path, kind: Kind
) -> None:
    h = scenario(tmp_path, kind, [{"error": {"kind": "provider"}}])
    injector = Injector(h.layout, None)
    session = observed(h, injector)

    result = session.send(PROMPT)

    assert result.status == "error"
    assert injector.snapshot is not None
    batch = added_rows(injector.snapshot, transcript_bytes(h.layout))
    if kind == "on-send":
        # The model failed before any reply: the message is kept, quarantined with the
        # failure (never sent again); inside, it is the trigger the batch appended.
        quarantined = batch[2]
        assert quarantined.flag("contextBudgetRejected")
        assert quarantined.metadata["sendFailure"] == "scripted provider error"
        original = quarantined.metadata["contextBudgetRejectedMessage"]
        batch[2] = row_from_obj({**original, "id": quarantined.id, "metadata": {
            **original["metadata"], "historySequence": quarantined.sequence}})
    assert_complete_batch(batch, kind)
    store = h.store
    assert isinstance(store, ObservedStore)
    assert_handed_over(store, batch[0])
    # The send was that same prepared request: lead-in and trigger, nothing of the old window.
    sent = h.requests()[-1]
    assert [r.id for r in sent.rows] == [r.id for r in batch[1:]]
    assert EDITED in sent.system  # the new window was given the old window's edited file
    assert result.window_id == f"w:{batch[0].sequence}"

    # R7: a restarted process takes the next message in the new window; no second rollover.
    restarted = h.session(threshold=THRESHOLD)
    follow = restarted.send("next message")
    assert follow.status == "completed" and follow.rollovers == 0
    assert sum(is_rollover_boundary(r) for r in h.rows()) == 1
    last = h.requests()[-1]
    assert last.rows[-1].text == "next message"
    assert sum(is_synthetic_continuation(r) for r in last.rows) <= 1


@pytest.mark.parametrize("kind", KINDS)
def test_store_append_failure_during_admission_leaves_the_transcript_untouched(
    tmp_path: Path, kind: Kind
) -> None:
    h = scenario(tmp_path, kind, [{"text": "never reached"}])
    injector = Injector(h.layout, None)
    session = observed(h, injector, fail_rollover=True)

    with pytest.raises(StoreError, match="injected"):
        session.send(PROMPT)

    assert injector.snapshot is not None
    assert transcript_bytes(h.layout) == injector.snapshot
    assert not any(is_rollover_boundary(r) for r in h.rows())
    store = h.store
    assert isinstance(store, ObservedStore)
    # Cleanup happened before the append was attempted, never after a publication.
    assert store.carryover_at_rollover == [{}]
    assert len(h.requests()) == requests_before_admission(kind)  # nothing sent after it


@pytest.mark.parametrize("kind", ["on-send", "mid-stream"])
def test_torn_append_during_admission_is_never_a_fresh_window(
    tmp_path: Path, kind: Kind, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The batch write itself dies half way (a crash inside ``write``): readers never see a
    partial batch, and the next locked operation restores the transcript byte for byte."""
    h = scenario(tmp_path, kind, [{"text": "never reached"}])
    injector = Injector(h.layout, None)
    session = observed(h, injector)
    # The store's own "write every byte" helper, looked up where the store calls it.
    write_all = getattr(store_module, "write_all")  # noqa: B009

    def torn_write(fd: int, data: bytes) -> None:
        if b"context-window-rollover" in data:
            os.write(fd, data[: len(data) // 2])
            raise OSError(28, "No space left on device")
        write_all(fd, data)

    with monkeypatch.context() as patch:
        patch.setattr("segue._history.store.write_all", torn_write)
        with pytest.raises(FileError, match=r"no space left on device at .*; nothing was written"):
            session.send(PROMPT)

    assert injector.snapshot is not None
    reader = HistoryStore(h.layout, durable=False)
    assert not any(r.mux_type for r in reader.rows())  # no part of the batch is visible
    assert not any(is_rollover_boundary(r) for r in load_window(reader))
    reader.recover()
    assert transcript_bytes(h.layout) == injector.snapshot


@pytest.mark.parametrize("phase", ["fit", "append"])
def test_failed_admission_leaves_the_session_usable(tmp_path: Path, phase: str) -> None:
    """After an untouched failure (before or after cleanup) the next send rolls over exactly
    once, and the new window still gets the old window's edited files."""
    h = scenario(tmp_path, "on-send", [{"text": "answered in the new window"}])
    injector = Injector(h.layout, phase, "raise")
    session = observed(h, injector)
    with pytest.raises(InjectedFault):
        session.send(PROMPT)
    injector.phase = None
    result = session.send(PROMPT)
    assert result.status == "completed" and result.rollovers == 1
    assert sum(is_rollover_boundary(r) for r in h.rows()) == 1
    assert [r.text for r in h.rows()].count(PROMPT) == 1
    assert EDITED in h.requests()[-1].system  # the edit was not lost by the failed attempt
