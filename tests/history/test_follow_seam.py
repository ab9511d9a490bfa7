"""How ``history follow`` reaches a store: through the store's own watch and the protocols of
:mod:`segue._history.protocol`, never by naming a store class."""

from __future__ import annotations

from pathlib import Path

import pytest

from segue import Layout
from segue._history import HistoryStore, InMemoryStore, ReadsSnapshots
from segue._history.watch import InotifyWatch, PollWatch, Watchable, watch
from segue._messages import Row, make_row


def _row(text: str) -> Row:
    return make_row("user", text, id=f"u-{text}")


def test_the_jsonl_store_opens_a_file_watch_that_sees_an_append(tmp_path: Path) -> None:
    store = HistoryStore(Layout(tmp_path / ".segue", "ws"))
    store.append([_row("first")])
    assert isinstance(store, Watchable)
    opened = watch(store)
    try:
        assert isinstance(opened, InotifyWatch | PollWatch)
        store.append([_row("second")])
        assert opened.wait(30.0) is True
    finally:
        opened.close()


def test_a_store_without_a_watch_is_refused_by_name() -> None:
    store = InMemoryStore("ws")
    with pytest.raises(TypeError, match="cannot watch a InMemoryStore"):
        watch(store)


def test_only_a_snapshot_store_reads_without_the_lock() -> None:
    pytest.importorskip("psycopg")
    from segue.postgres._store import PostgresStore

    assert issubclass(PostgresStore, ReadsSnapshots)
    assert issubclass(PostgresStore, Watchable)
    assert not issubclass(HistoryStore, ReadsSnapshots)
    assert not issubclass(InMemoryStore, ReadsSnapshots)
