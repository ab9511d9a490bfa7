"""A file written by another tool may end in a whole row without its newline: that row is
data and survives recovery; a partial row (a torn write) does not."""

from __future__ import annotations

from pathlib import Path

from segue import HistoryStore, Layout, make_row

ROW = b'{"id":"a","role":"user","parts":[{"type":"text","text":"kept"}],"metadata":{}}'


def _store(tmp_path: Path, content: bytes) -> HistoryStore:
    layout = Layout(tmp_path, "ws")
    layout.session_dir.mkdir(parents=True)
    layout.chat.write_bytes(content)
    return HistoryStore(layout, durable=False)


def test_a_complete_last_row_without_newline_is_sealed_not_removed(tmp_path: Path) -> None:
    store = _store(tmp_path, ROW)
    report = store.recover()
    assert any("sealed a complete last row" in a for a in report.actions)
    assert store.layout.chat.read_bytes() == ROW + b"\n"
    store.append([make_row("assistant", "next", id="b")])
    assert [r.text for r in store.rows()] == ["kept", "next"]
    assert store.verify().ok


def test_a_partial_last_row_is_removed(tmp_path: Path) -> None:
    store = _store(tmp_path, ROW + b"\n" + ROW[:30])
    store.recover()
    assert store.layout.chat.read_bytes() == ROW + b"\n"
    assert [r.text for r in store.rows()] == ["kept"]
