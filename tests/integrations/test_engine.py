"""The framework-free engine under both integrations: configuration errors, and what a
pop (a truncation) does to the store's other guarantees (R11, R26, R29)."""

from __future__ import annotations

from pathlib import Path

import pytest

from segue._errors import UsageError
from segue._history import HistoryStore
from segue._messages import make_row
from segue._workspace import Layout
from segue.integrations._engine import WindowEngine

WS = "engine-ws"


def test_an_unknown_model_needs_its_limit_and_encoding(segue_home: Path) -> None:
    with pytest.raises(UsageError, match="context_window"):
        WindowEngine(WS, model="openai-compatible:mystery", encoding="o200k_base")
    with pytest.raises(UsageError, match="encoding"):
        WindowEngine(WS, model="openai-compatible:mystery", context_window=8000)
    with pytest.raises(UsageError, match="steps of 5"):
        WindowEngine(WS, model="openai:gpt-4o", threshold=72)
    engine = WindowEngine(
        WS, model="openai-compatible:mystery", context_window=8000, encoding="cl100k_base"
    )
    assert engine.budget.limit == 8000 and engine.token_model.encoding == "cl100k_base"
    assert WindowEngine(WS, model="openai:gpt-4o").budget.limit == 128_000


def test_drop_last_keeps_floors_and_expires_cursors(segue_home: Path) -> None:
    layout = Layout(segue_home, WS)
    store = HistoryStore(layout)
    store.append([make_row("user", f"message {i}", id=f"u{i}") for i in range(3)])
    engine = WindowEngine(WS, model="openai:gpt-4o")
    page = engine.history({"action": "list_items", "window_id": "w:0", "limit": 1})
    cursor = page["nextCursor"]
    assert isinstance(cursor, str)

    assert store.drop_last("1") is None  # not the newest row
    dropped = store.drop_last("2")
    assert dropped is not None and dropped.text == "message 2"
    again = engine.history(
        {"action": "list_items", "window_id": "w:0", "limit": 1, "cursor": cursor}
    )
    assert again["ok"] is False and again["error"]["code"] == "stale_cursor"
    assert store.verify().ok

    store.append([make_row("assistant", id="reset", metadata={"contextBoundaryKind": "reset"})])
    assert store.drop_last("3") is None  # a floor is never erased
    assert [r.id for r in store.rows()] == ["u0", "u1", "reset"]
