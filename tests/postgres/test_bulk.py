"""``history migrate``'s bulk paths (one binary COPY each way): a history of many chunks
with the archive ending mid-chunk goes JSONL -> PostgreSQL -> JSONL byte for byte and
answers as the source; the streamed check PostgreSQL -> JSONL applies agrees with
``history verify`` on every history, and a damaged one is refused, leaving no file."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from segue._errors import StoreError
from segue._history.batch import encode_batch, stamp
from segue._history.store import HistoryStore
from segue._messages import make_row
from segue._views.windows import search
from segue._workspace import Layout
from segue.postgres import _search as pg_search
from segue.postgres._bulk import CHUNK, LineCheck
from segue.postgres._migrate import TEMP_SUFFIX, jsonl_to_postgres, postgres_to_jsonl
from segue.postgres._store import PostgresStore
from tests.conftest import scaled
from tests.postgres.cluster import cluster

FILES = ("chat-archive.jsonl", "chat.jsonl")


def _lines(n: int, start: int, tag: str) -> list[bytes]:
    rows = [
        make_row("user" if i % 3 else "assistant",
                 f"{tag} step {i}: pytest -q tests/test_{i % 17}.py -> {i % 5} failed"
                 + (" needle" if i % 97 == 0 else ""),
                 id=f"{tag}{i}")
        for i in range(n)
    ]
    data, _ = encode_batch(stamp(rows, start, "ws"))
    return data.split(b"\n")[:-1]


def test_many_chunks_round_trip_byte_exact(pg_url: str, tmp_path: Path) -> None:
    ws = "bulk-" + uuid.uuid4().hex[:8]
    archive = _lines(CHUNK + 37, 0, "a")  # the archive ends inside the second chunk
    chat = _lines(2 * CHUNK + 5, CHUNK + 37, "c")
    src = Layout(tmp_path / "a", ws)
    src.session_dir.mkdir(parents=True)
    for name, lines in zip(FILES, (archive, chat), strict=True):
        (src.session_dir / name).write_bytes(b"".join(x + b"\n" for x in lines))
    HistoryStore(src).recover()
    report = jsonl_to_postgres(src, pg_url)
    assert (report.lines, report.archive_lines) == (len(archive) + len(chat), len(archive))
    with PostgresStore(pg_url, ws) as pg:
        disk = HistoryStore(src)
        assert [(x.source, x.offset, x.raw) for x in pg.lines()] == [
            (x.source, x.offset, x.raw) for x in disk.lines()
        ]
        assert pg.next_sequence() == disk.next_sequence() == len(archive) + len(chat)
        want = [(h.item.item_id, h.snippet) for h in search(disk.rows(), "needle")]
        assert len(want) >= 3
        assert [(h.item.item_id, h.snippet) for h in pg_search.search(pg, "needle")] == want
        assert pg.verify().ok
        # it goes on where the source would: the next append's sequence and window
        stored = pg.append([make_row("user", "after the copy", id="next")])
        assert stored[0].sequence == len(archive) + len(chat)
    dst = Layout(tmp_path / "b", ws)
    postgres_to_jsonl(pg_url, dst)
    for name in FILES:
        assert (dst.session_dir / name).read_bytes() == (src.session_dir / name).read_bytes() + (
            b"" if name != "chat.jsonl" else encode_batch(stored)[0]
        )


def _load(url: str, ws: str, lines: list[tuple[str, bytes]], floor: int) -> None:
    with PostgresStore(url, ws) as pg:
        pg.load_lines(lines, floor)  # type: ignore[arg-type]


SEQS = st.lists(st.integers(0, 8) | st.none(), max_size=8)


@settings(max_examples=scaled(20, 150), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seqs=SEQS, split=st.integers(0, 8), floor=st.integers(0, 10))
def test_streamed_check_agrees_with_verify(seqs: list[int | None], split: int,
                                           floor: int) -> None:
    url = _db()
    ws = "chk-" + uuid.uuid4().hex[:8]
    lines: list[tuple[str, bytes]] = []
    for i, seq in enumerate(seqs):
        row = make_row("user", f"line {i}", id=f"r{i}")
        raw = encode_batch([row])[0][:-1] if seq is None else encode_batch(
            stamp([row], seq, ws))[0][:-1]
        lines.append(("archive" if i < split else "chat", raw))
    _load(url, ws, lines, floor)
    with PostgresStore(url, ws) as pg:
        verified = pg.verify().problems
        check = LineCheck()
        for source, off, seq, raw in pg.raw_lines():
            check.add(source, off, seq, raw)
        assert check.finish(pg.next_sequence()) == verified


_DB: list[str] = []


def _db() -> str:
    if not _DB:
        _DB.append(cluster().new_database())
    return _DB[0]


def test_damaged_source_is_refused_and_leaves_no_file(pg_url: str, tmp_path: Path) -> None:
    ws = "dmg-" + uuid.uuid4().hex[:8]
    good = _lines(CHUNK + 10, 0, "g")
    # a line whose sequence goes back, far into the stream (after the first chunks were
    # written to the temporary files)
    back = encode_batch(stamp([make_row("user", "went back", id="back")], 5, ws))[0][:-1]
    _load(pg_url, ws, [("chat", x) for x in [*good, back]], len(good) + 1)
    dst = Layout(tmp_path / "b", ws)
    with pytest.raises(StoreError) as err:
        postgres_to_jsonl(pg_url, dst)
    assert err.value.code == "source_damaged"
    assert "out of order" in err.value.message
    left = [p.name for p in dst.session_dir.iterdir()]
    assert not [n for n in left if n in FILES or n.endswith(TEMP_SUFFIX)], left
