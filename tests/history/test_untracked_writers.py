"""A writer that ignores the lock (another program, an old tool) changes chat.jsonl while segue
appends. Whatever it did, segue must not vouch for it: cursors expire (R26, R29: only verified
appends keep the epoch) and the next locked operation still recovers the files (a torn tail
it left is removed before segue appends behind it), so no acknowledged row is lost.

The foreign writes are made by a real process, at the two instants that matter: after the
store verified the receipt under the lock but before it opened chat, and during its write.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from segue import HistoryStore, Layout, SessionHistoryTool, make_row
from segue import _fsutil as fsutil
from segue._history import read_receipt
from segue._history import store as store_module

_APPEND = "import sys; open(sys.argv[1], 'ab').write(sys.argv[2].encode())"
COMPLETE = '{"id":"ext","role":"user","parts":[{"type":"text","text":"foreign"}],"metadata":{}}\n'
TORN = '{"id":"ext","role":"user","par'


def foreign_append(path: Path, data: str) -> None:
    """Append without the lock, from another process."""
    subprocess.run([sys.executable, "-c", _APPEND, str(path), data], check=True)


def _rows(n: int, tag: str) -> list[Any]:
    return [make_row("user", f"{tag} row {i} needle", id=f"{tag}{i}") for i in range(n)]


@pytest.fixture
def store(tmp_path: Path) -> HistoryStore:
    s = HistoryStore(Layout(tmp_path, "ws"), durable=False)
    s.append(_rows(30, "a"))
    return s


def _search(tool: SessionHistoryTool, cursor: str | None = None) -> dict[str, Any]:
    args: dict[str, Any] = {"action": "search", "query": "needle", "limit": 5}
    if cursor is not None:
        args["cursor"] = cursor
    return tool.call(args)


def _after_prepare(store: HistoryStore, action: Callable[[], None]) -> None:
    real = store._prepare

    def prepare() -> Any:
        result = real()
        action()
        return result

    store._prepare = prepare  # type: ignore[method-assign]


def test_foreign_append_after_verification_expires_cursors(store: HistoryStore) -> None:
    tool = SessionHistoryTool(store.layout)
    page = _search(tool)
    assert page["ok"] and page["nextCursor"]
    epoch = read_receipt(store.layout).epoch  # type: ignore[union-attr]
    _after_prepare(store, lambda: foreign_append(store.layout.chat, COMPLETE))
    store.append(_rows(1, "b"))
    after = read_receipt(store.layout)
    assert after is None or after.state != "stable" or after.epoch != epoch
    assert _search(tool, page["nextCursor"])["error"]["code"] == "stale_cursor"
    # the rows are all there; the next locked operation brings the receipt back
    fresh = HistoryStore(store.layout, durable=False)
    fresh.append(_rows(1, "c"))
    assert [r.id for r in fresh.rows()][-3:] == ["ext", "b0", "c0"]
    assert fresh.verify().problems == []


def test_foreign_torn_write_during_append_is_not_vouched_for(
    store: HistoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    def write_all(fd: int, data: bytes) -> None:
        fsutil.write_all(fd, data)
        foreign_append(store.layout.chat, TORN)  # lands after our batch, cut short

    monkeypatch.setattr(store_module, "write_all", write_all)
    store.append(_rows(2, "b"))
    monkeypatch.undo()
    # a later append (another store, as another process would be) must not write behind the
    # foreign torn tail, which would fuse its first row into an unparseable line
    later = HistoryStore(store.layout, durable=False)
    stored = later.append(_rows(2, "c"))
    ids = [r.id for r in later.rows()]
    assert ids[-4:] == ["b0", "b1", "c0", "c1"]
    assert [r.sequence for r in stored] == [32, 33]
    assert later.verify().problems == []
