"""Behaviour every TranscriptStore shares (HistoryStore, InMemoryStore and PostgresStore,
parametrized)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from segue import (
    HistoryStore,
    InMemoryStore,
    MaintainedStore,
    TranscriptStore,
    decode_row,
    make_row,
)
from segue._errors import RowDecodeError, StoreError
from tests.postgres.cluster import cluster

if TYPE_CHECKING:
    from segue.postgres._store import PostgresStore

#: Rows in the shape a Xum session file holds (SPEC.md §3), with fields segue does not model
#: (providerMetadata, thinkingLevel) that must survive the import.
XUM_ROWS = (
    b'{"id":"user-1","role":"user","metadata":{"timestamp":1700000010000,"historySequence":7},'
    b'"parts":[{"type":"text","text":"Which file holds the entry point?","state":"done"}],'
    b'"workspaceId":"elsewhere"}\n'
    b'{"id":"assistant-1","role":"assistant","metadata":{"timestamp":1700000012000,'
    b'"model":"anthropic:claude-sonnet-4-5","thinkingLevel":"off","historySequence":8,'
    b'"providerMetadata":{"anthropic":{"cacheCreationInputTokens":1100}}},'
    b'"parts":[{"type":"text","text":"src/main.ts.","state":"done"}],"workspaceId":"elsewhere"}\n'
    b'{"id":"user-2","role":"user","metadata":{"timestamp":1700000020000,"historySequence":9},'
    b'"parts":[{"type":"text","text":"Thanks.","state":"done"}],"workspaceId":"elsewhere"}\n'
)

Factory = Callable[[], MaintainedStore]


@pytest.fixture(params=["disk", "memory", "postgres"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Factory:
    from segue import Layout

    if request.param == "disk":
        return lambda: HistoryStore(Layout(tmp_path, "ws"), durable=False)
    if request.param == "postgres":
        from segue.postgres._store import PostgresStore

        url = cluster().new_database()
        opened: list[PostgresStore] = []
        request.addfinalizer(lambda: _close_all(opened))  # noqa: PT021

        def make() -> MaintainedStore:
            opened.append(PostgresStore(url, "ws"))
            return opened[-1]

        return make
    mem = InMemoryStore("ws")
    return lambda: mem


def _close_all(stores: list[PostgresStore]) -> None:
    for store in stores:
        store.close()


def test_protocol_is_implemented(make_store: Factory) -> None:
    store = make_store()
    assert isinstance(store, TranscriptStore)
    assert isinstance(store, MaintainedStore)


def test_sequences_are_assigned_by_the_store(make_store: Factory) -> None:
    store = make_store()
    given = make_row("user", "hi", id="u", metadata={"historySequence": 999})
    stored = store.append([given, make_row("assistant", "yo", id="a")])
    assert [r.sequence for r in stored] == [0, 1]
    assert all(r.workspaceId == "ws" for r in stored)
    again = make_store().append([make_row("user", "more", id="u2")])
    assert again[0].sequence == 2
    assert [r.sequence for r in make_store().rows()] == [0, 1, 2]
    assert make_store().next_sequence() == 3
    assert make_store().append([]) == []


def test_rotation_moves_rows_before_the_newest_boundary(make_store: Factory) -> None:
    store = make_store()
    store.append([make_row("user", "a", id="a"), make_row("assistant", "b", id="b")])
    reset = make_row("assistant", id="r", metadata={"contextBoundaryKind": "reset"})
    store.append([make_row("user", "c", id="c"), reset, make_row("user", "d", id="d")])
    lines = list(store.lines())
    assert [(line.source, line.row.id if line.row else None) for line in lines] == [
        ("archive", "a"), ("archive", "b"), ("archive", "c"), ("chat", "r"), ("chat", "d"),
    ]
    compaction = make_row(
        "assistant",
        "summary",
        id="s",
        metadata={"compactionBoundary": True, "compacted": True, "compactionEpoch": 1},
    )
    store.append([compaction])
    assert [line.row.id for line in store.lines() if line.source == "chat" and line.row] == ["s"]
    assert [r.id for r in store.rows()] == ["a", "b", "c", "r", "d", "s"]
    assert [line.row.id for line in store.lines_reverse() if line.row] == [
        "s", "d", "r", "c", "b", "a",
    ]
    assert store.verify().ok


def test_quarantine_keeps_id_and_sequence(make_store: Factory) -> None:
    store = make_store()
    store.append([make_row("user", "ok", id="u0")])
    big = make_row(
        "user", "huge attachment", id="u1",
        metadata={"timestamp": 5, "compactionBoundary": True, "uiVisible": True},
    )
    store.append([big, make_row("assistant", "after", id="a1")])
    q = store.quarantine("1")
    assert (q.id, q.sequence, q.role, q.parts) == ("u1", 1, "assistant", ())
    assert q.metadata["contextBudgetRejected"] is True
    inner = q.metadata["contextBudgetRejectedMessage"]
    assert inner["role"] == "user"
    assert inner["parts"][0]["text"] == "huge attachment"
    assert inner["metadata"]["compactionBoundary"] is True
    assert "compactionBoundary" not in q.metadata  # no control metadata stays active
    assert q.metadata["timestamp"] == 5
    rows = list(store.rows())
    assert [r.id for r in rows] == ["u0", "u1", "a1"]
    assert rows[1] == q
    assert store.quarantine("1") == q  # idempotent
    with pytest.raises(StoreError, match="no item"):
        store.quarantine("42")
    assert store.verify().ok


def test_import_refuses_a_file_with_a_bad_line(make_store: Factory) -> None:
    store = make_store()
    good = XUM_ROWS
    with pytest.raises(RowDecodeError, match="line 3"):
        store.import_rows(b'{"id":"x","role":"user","parts":[],"metadata":{}}\n\nnot json\n')
    assert list(store.rows()) == []
    imported = store.import_rows(good)
    originals = [decode_row(line) for line in good.splitlines() if line.strip()]
    assert [r.id for r in imported] == [o.id for o in originals]
    assert [r.sequence for r in imported] == list(range(len(originals)))
    for got, want in zip(imported, originals, strict=True):
        assert got.workspaceId == "ws"
        assert {k: v for k, v in got.metadata.items() if k != "historySequence"} == {
            k: v for k, v in want.metadata.items() if k != "historySequence"
        }
        assert got.parts == want.parts


def test_clear_never_lets_a_sequence_be_reused(make_store: Factory) -> None:
    store = make_store()
    store.append([make_row("user", "a", id="a"), make_row("user", "b", id="b")])
    store.clear_all()
    assert list(store.rows()) == []
    assert store.append([make_row("user", "c", id="c")])[0].sequence == 2


def test_batch_with_unencodable_row_appends_nothing(make_store: Factory) -> None:
    store = make_store()
    store.append([make_row("user", "a", id="a")])
    bad = make_row("user", "x", id="bad", metadata={"obj": object()})
    with pytest.raises((TypeError, ValueError)):
        store.append([make_row("user", "ok", id="ok"), bad])
    assert [r.id for r in store.rows()] == ["a"]
    assert store.next_sequence() == 1


def test_a_boundary_is_never_quarantined(make_store: Factory) -> None:
    """R11: no automatic rewrite may erase a floor (or any context boundary)."""
    store = make_store()
    reset = make_row("assistant", id="r", metadata={"contextBoundaryKind": "reset"})
    store.append([make_row("user", "before", id="u0"), reset])
    with pytest.raises(StoreError, match="boundary") as info:
        store.quarantine("1")
    assert info.value.code == "not_quarantinable"
    assert [r.id for r in store.rows()][-1] == "r"
    assert "contextBudgetRejected" not in list(store.rows())[-1].metadata
