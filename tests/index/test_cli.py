"""``segue history search | reindex | verify`` with the history index, through the CLI."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from segue._history.store import HistoryStore
from segue._retrieval.index_file import index_path
from segue._workspace import Layout
from tests.cli.test_history_cli import WS, segue, write_session
from tests.index.histories import KINDS, Op, lines_of
from tests.retrieval.helpers import write_history


@pytest.fixture
def imported(segue_home: Path, tmp_path: Path) -> Layout:
    result = segue(segue_home, "history", "import", str(write_session(tmp_path / "s.jsonl")))
    assert result.exit_code == 0, result.output
    return Layout(segue_home, WS)


def _search(home: Path, query: str) -> list[dict[str, object]]:
    result = segue(home, "history", "search", query, "--json")
    items: list[dict[str, object]] = json.loads(result.stdout)["items"]
    assert result.exit_code == (0 if items else 1), result.output  # 1: no match, as grep
    return items


def test_reindex_then_search_finds_what_the_scan_finds(imported: Layout) -> None:
    home = imported.home
    queries = ["the", "a", "TOOL", "secret", "zz-none", "ß", "[tool", "Continue"]
    scanned = {q: _search(home, q) for q in queries}  # no index yet: the scan
    # The comparison below means something only where the scan found rows (the others are
    # words no row above the floor holds).
    assert [q for q in queries if scanned[q]] == ["the", "a", "TOOL", "[tool"], scanned
    assert not index_path(imported).exists()  # a read-only command creates nothing
    result = segue(home, "history", "reindex")
    assert result.exit_code == 0, result.output
    assert f"Indexed workspace {WS}" in result.stdout
    assert index_path(imported).is_file()
    for q in queries:
        assert _search(home, q) == scanned[q], q


def test_search_uses_the_index(imported: Layout, monkeypatch: pytest.MonkeyPatch) -> None:
    """The index really answers (the scan is not called), and an index whose tokens say a
    row holds a word it lacks makes no false hit: every hit is re-read and matched again."""
    want = _search(imported.home, "the")
    assert segue(imported.home, "history", "reindex").exit_code == 0

    def no_scan(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("scanned although the index is trusted")

    monkeypatch.setattr("segue._cli.history.search", no_scan)
    assert _search(imported.home, "the") == want
    conn = sqlite3.connect(index_path(imported))
    conn.execute("INSERT INTO lit (rowid, body) SELECT pos, 'planted-word' FROM rows")
    conn.execute("INSERT OR IGNORE INTO lex (term) VALUES ('planted'), ('word')")
    conn.execute("INSERT INTO lexgrams (rowid, term) SELECT id, term FROM lex")
    conn.commit()
    conn.close()
    assert _search(imported.home, "planted-word") == []


def test_search_sees_rows_appended_after_the_index(imported: Layout) -> None:
    assert segue(imported.home, "history", "reindex").exit_code == 0
    from tests.retrieval.helpers import text_row

    HistoryStore(imported, durable=False).append(
        [text_row("appended-later word", None, rid="late")]
    )
    before = index_path(imported).read_bytes()
    hits = _search(imported.home, "appended-later")
    assert [h["text"] for h in hits] == ["appended-later word"]
    assert index_path(imported).read_bytes() == before  # read-only: not caught up by search


def test_verify_reports_index_mismatch_as_warning(imported: Layout) -> None:
    assert segue(imported.home, "history", "reindex").exit_code == 0
    clean = segue(imported.home, "history", "verify", "--json")
    assert clean.exit_code == 0
    assert json.loads(clean.stdout)["warnings"] == []
    conn = sqlite3.connect(index_path(imported))
    conn.execute("UPDATE rows SET len = len + 1 WHERE pos = (SELECT min(pos) FROM rows)")
    conn.commit()
    conn.close()
    result = segue(imported.home, "history", "verify", "--json")
    assert result.exit_code == 0  # a cache mismatch is a warning, not damage
    warnings = json.loads(result.stdout)["warnings"]
    assert any(w.startswith("history index mismatch: line at byte 0") for w in warnings), warnings


def test_verify_warns_about_an_untrusted_index(imported: Layout) -> None:
    assert segue(imported.home, "history", "reindex").exit_code == 0
    index_path(imported).write_bytes(b"garbage" * 100)
    result = segue(imported.home, "history", "verify")
    assert result.exit_code == 0
    assert "history index not used (not an SQLite file)" in result.stdout


def test_reindex_refuses_an_untrusted_receipt(segue_home: Path) -> None:
    layout = Layout(segue_home, WS)
    write_history(layout, [], lines_of([Op("text", "needle", "user", "bash")]), receipt=False)
    result = segue(segue_home, "history", "reindex")
    assert result.exit_code == 1
    assert result.stderr.strip().endswith("try again")
    assert "Traceback" not in result.output
    assert not index_path(layout).exists()


def test_reindex_refuses_during_a_xum_stream(imported: Layout) -> None:
    partial = imported.session_dir / "partial.json"
    partial.write_text("{}")
    result = segue(imported.home, "history", "reindex")
    assert result.exit_code == 1
    assert "partial.json" in result.stderr
    assert not index_path(imported).exists()


def test_history_kinds_cover_the_cli(segue_home: Path) -> None:
    """Every kind of line of the property tests, searched through the CLI with an index."""
    layout = Layout(segue_home, WS)
    history = [Op(k, "needle", "user", "bash") for k in KINDS]
    write_history(layout, lines_of(history[:5]), lines_of(history)[5:])
    scanned = _search(segue_home, "needle")
    assert segue(segue_home, "history", "reindex").exit_code == 0
    assert _search(segue_home, "needle") == scanned
    assert scanned
