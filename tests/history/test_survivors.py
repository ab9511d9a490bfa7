"""Guarantees no other test pinned (each kills a mutant of scripts/mutants.py): the sequence
floor a receipt records outlives a receipt that no longer matches the files (R29), an
acknowledged batch is fsynced (R28), the 16 KiB answer bound (R24), and an index of another
schema version or one claiming more of chat.jsonl than it holds is never trusted (R35)."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from segue import HistoryStore, Layout, SessionHistoryTool
from segue._retrieval.index_build import rebuild
from segue._retrieval.index_file import index_path
from tests.retrieval.helpers import text_row

MAX_RESULT = 16 * 1024  # SPEC.md R24


def test_a_mismatched_receipt_keeps_the_recorded_sequence_floor(tmp_path: Path) -> None:
    store = HistoryStore(Layout(tmp_path, "ws"), durable=False)
    stored = store.append([text_row(f"r{i}", None) for i in range(3)])
    assert [r.sequence for r in stored] == [0, 1, 2]
    assert store.drop_last("2") is not None  # the number 2 is never reused
    with open(store.layout.chat, "ab") as f:  # an untracked change: the receipt mismatches
        f.write(b"not a row\n")
    assert store.next_sequence() == 3
    assert [r.sequence for r in store.append([text_row("next", None)])] == [3]


def test_an_acknowledged_batch_is_fsynced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = HistoryStore(Layout(tmp_path, "ws"))
    store.append([text_row("first", None)])
    synced: list[str] = []
    real = os.fsync

    def spy(fd: Any) -> None:
        if isinstance(fd, int):
            synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real(fd)

    monkeypatch.setattr(os, "fsync", spy)
    store.append([text_row("second", None)])
    assert str(store.layout.chat.resolve()) in synced


def _serialized(answer: dict[str, Any]) -> int:
    return len(json.dumps(answer, separators=(",", ":"), ensure_ascii=False).encode())


def test_a_result_never_exceeds_16_kib(tmp_path: Path) -> None:
    store = HistoryStore(Layout(tmp_path, "ws"), durable=False)
    # control characters serialize as six bytes each: a page of 12,000 of them is 72 KB
    store.append([text_row("\x01\x02 log \x1b[0m " * 4000, None)])
    tool = SessionHistoryTool(store.layout)
    answer = tool.call({"action": "read_item", "item_id": "0", "limit_chars": 12_000})
    assert answer["ok"], answer
    size = _serialized(answer)
    assert MAX_RESULT // 2 < size <= MAX_RESULT  # a full page, within the bound


def _indexed(tmp_path: Path) -> tuple[Layout, sqlite3.Connection]:
    store = HistoryStore(Layout(tmp_path, "ws"), durable=False)
    store.append([text_row(f"needle {i}", None) for i in range(5)])
    rebuild(store.layout)
    return store.layout, sqlite3.connect(index_path(store.layout))


def _needles(layout: Layout) -> list[str]:
    answer = SessionHistoryTool(layout).call({"action": "search", "query": "needle"})
    assert answer["ok"], answer
    return sorted(i["text"] for i in answer["items"])


def test_an_index_of_another_schema_version_is_not_trusted(tmp_path: Path) -> None:
    layout, conn = _indexed(tmp_path)
    with conn:
        (schema,) = conn.execute("SELECT v FROM meta WHERE k = 'schema'").fetchone()
        conn.execute("UPDATE meta SET v = ? WHERE k = 'schema'", (schema + "-other",))
        conn.execute("DELETE FROM rows")  # what another version's rows would mean to us
    conn.close()
    assert _needles(layout) == [f"needle {i}" for i in range(5)]


def test_an_index_claiming_more_of_chat_than_it_holds_falls_back(tmp_path: Path) -> None:
    layout, conn = _indexed(tmp_path)
    with conn:
        conn.execute("UPDATE meta SET v = ? WHERE k = 'chat_read'", (str(10**9),))
    conn.close()
    assert _needles(layout) == [f"needle {i}" for i in range(5)]


CHUNK = 1 << 16  # the backward reader's read size: its edges fall at the end minus multiples
KEY_TOKEN = b'"contextBoundaryKind"'


def _straddling(tail: bytes, edge_from_end: int, split: int) -> bytes:
    """A 3 MiB row (a floor: its own reset key) whose key token crosses the point
    ``edge_from_end`` bytes before the end of a file that ends with this line and ``tail``,
    ``split`` bytes of the token before that point."""
    head = b'{"id":"big","role":"assistant","parts":[],"metadata":{"pad":"'
    suffix_len = edge_from_end + split - len(KEY_TOKEN) - 1 - len(tail)
    fixed = b':"reset","x":"' + b'"}}'
    suffix = b':"reset","x":"' + b"z" * (suffix_len - len(fixed)) + b'"}}'
    pad = (3 << 20) - len(head) - 2 - len(KEY_TOKEN) - len(suffix)
    line = head + b"y" * pad + b'",' + KEY_TOKEN + suffix
    assert len(KEY_TOKEN) + len(suffix) + 1 + len(tail) == edge_from_end + split
    return line


@pytest.mark.parametrize("split", [1, 7, len(KEY_TOKEN) - 1])
@pytest.mark.parametrize("edges", [3, 20, 32])  # 32 × 64 KiB: where a 2 MiB budget ends
def test_the_backward_reader_sees_a_reset_key_across_its_chunk_edges(
    tmp_path: Path, split: int, edges: int
) -> None:
    from tests.retrieval.helpers import encoded, pages, write_history

    old, new = encoded([text_row("OLDQ secret", 0), text_row("NEWQ after", 2)])
    tail = new + b"\n"
    line = _straddling(tail, edges * CHUNK, split)
    layout = Layout(tmp_path, "ws")
    write_history(layout, [], [old, line, new])
    tool = SessionHistoryTool(layout, use_index=False, build_index=False)
    seen = []
    call = {"action": "search", "query": "Q", "match": "literal", "order": "newest"}
    for page in pages(tool, call):
        assert page["ok"], page
        seen += [item["text"] for item in page["items"]]
    assert seen == ["NEWQ after"]
