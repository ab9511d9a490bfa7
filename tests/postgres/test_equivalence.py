"""The PostgreSQL store and the JSONL store, given the same operations, hold the same lines
(source, offset, length, bytes, reset marker), the same sequences, and answer every search
alike; a fuzzed history with damaged lines survives JSONL -> PostgreSQL -> JSONL byte for
byte. Many spellings, so hypothesis."""

from __future__ import annotations

import tempfile
import uuid
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from segue._errors import StoreError
from segue._history.scan import StoredLine
from segue._history.store import HistoryStore
from segue._messages import Row, encode_row, make_row
from segue._views.windows import search
from segue._workspace import Layout
from segue.postgres import _search as pg_search
from segue.postgres._migrate import jsonl_to_postgres, postgres_to_jsonl
from segue.postgres._store import PostgresStore
from tests.conftest import scaled
from tests.postgres.cluster import cluster

TEXT = st.lists(
    st.characters(codec="utf-8") | st.sampled_from(
        ["K", "k", "\u212a", "ß", "SS", "İ", "i", "ſ", "s", "%", "_", "\\", "\x00", "needle ",
         "\ud800"]
    ),
    max_size=12,
).map("".join)
META = st.sampled_from([
    {},
    {"synthetic": True, "uiVisible": False},
    {"synthetic": True, "uiVisible": True},
    {"contextBoundaryKind": "reset"},
    {"compactionBoundary": True, "compacted": True, "compactionEpoch": 1},
    {"muxMetadata": {"type": "compaction-request"}},
])
ROW = st.builds(
    lambda role, text, meta: (role, text, meta),
    st.sampled_from(["user", "assistant", "system"]), TEXT, META,
)
OP = st.one_of(
    st.tuples(st.just("append"), st.lists(ROW, min_size=1, max_size=4)),
    st.tuples(st.just("quarantine"), st.integers(0, 30)),
    st.tuples(st.just("clear"), st.none()),
)

_SETTINGS = settings(
    max_examples=scaled(25, 300),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _key(line: StoredLine) -> tuple[Any, ...]:
    return (line.source, line.offset, line.length, line.raw, line.reset_marker)


def _apply(store: HistoryStore | PostgresStore, op: tuple[str, Any], n: int) -> object:
    kind, arg = op
    if kind == "append":
        rows: list[Row] = [
            make_row(role, text, id=f"r{n}-{i}", metadata=dict(meta))
            for i, (role, text, meta) in enumerate(arg)
        ]
        return [r.sequence for r in store.append(rows)]
    if kind == "quarantine":
        try:
            return store.quarantine(str(arg))
        except StoreError as exc:
            return exc.code
    store.clear_all()
    return None


@_SETTINGS
@given(ops=st.lists(OP, max_size=8), queries=st.lists(TEXT.filter(bool), max_size=3))
def test_same_operations_same_store(ops: list[tuple[str, Any]], queries: list[str]) -> None:
    url = cluster().new_database() if not _DB else _DB[0]
    _DB[:] = [url]
    ws = "h" + uuid.uuid4().hex[:10]
    with tempfile.TemporaryDirectory() as tmp, PostgresStore(url, ws) as pg:
        disk = HistoryStore(Layout(Path(tmp), ws), durable=False)
        for n, op in enumerate(ops):
            assert _apply(pg, op, n) == _apply(disk, op, n), op
        assert [_key(x) for x in pg.lines()] == [_key(x) for x in disk.lines()]
        assert [_key(x) for x in pg.lines_reverse()] == [_key(x) for x in disk.lines_reverse()]
        assert pg.next_sequence() == disk.next_sequence()
        assert pg.verify().ok
        # the texts themselves with their case swapped: hits only a case-insensitive match finds
        swapped = [t.swapcase() for kind, arg in ops if kind == "append"
                   for _, t, _ in arg if t.strip()]
        for q in [*queries, "needle", "NEEDLE", *swapped[:6]]:
            want = [(h.item.item_id, h.item.window_id, h.matches, h.snippet)
                    for h in search(disk.rows(), q)]
            got = [(h.item.item_id, h.item.window_id, h.matches, h.snippet)
                   for h in pg_search.search(pg, q)]
            assert got == want, q


_DB: list[str] = []

LINE = st.one_of(
    TEXT.map(lambda t: encode_row(make_row("user", t, id="u"))),
    st.binary(max_size=60).map(lambda b: b.replace(b"\n", b" ")),  # garbage, invalid UTF-8
    st.just(b'{"id":"r","role":"assistant","parts":[],"metadata":{"contextBoundaryK\\u0069nd":'
            b'"reset"}}'),
    st.just(b'{"contextBoundaryKind": "reset", \xff\xfe}'),
    st.just(b'{"id":"big","role":"user","parts":[{"type":"text","text":"'
            + b"z" * (1 << 20) + b'"}],"metadata":{}}'),
)


@settings(max_examples=scaled(8, 80), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(archive=st.lists(LINE, max_size=6), chat=st.lists(LINE, max_size=6))
def test_damaged_history_round_trip_is_byte_exact(archive: list[bytes], chat: list[bytes]) -> None:
    url = cluster().new_database() if not _DB else _DB[0]
    _DB[:] = [url]
    ws = "f" + uuid.uuid4().hex[:10]
    with tempfile.TemporaryDirectory() as tmp:
        src = Layout(Path(tmp) / "a", ws)
        src.session_dir.mkdir(parents=True)
        want = {}
        for name, lines in (("chat-archive.jsonl", archive), ("chat.jsonl", chat)):
            if lines:
                data = b"".join(line + b"\n" for line in lines)
                (src.session_dir / name).write_bytes(data)
                want[name] = data
        jsonl_to_postgres(src, url)
        dst = Layout(Path(tmp) / "b", ws)
        postgres_to_jsonl(url, dst)
        got = {n: (dst.session_dir / n).read_bytes()
               for n in ("chat-archive.jsonl", "chat.jsonl") if (dst.session_dir / n).exists()}
        assert got == want
        assert HistoryStore(dst).verify().ok
