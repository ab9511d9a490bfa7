"""`segue history search` over PostgreSQL searches what the banner says, as the JSONL store
does: hidden rows (a rollover's lead-in) and reasoning are not items and are not found."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_history_cli import write_session
from tests.cli.test_search_scope import FOUND, NOT_FOUND
from tests.postgres.test_cli import ok, segue


def test_postgres_search_finds_what_the_banner_says(pg_url: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    ok(segue(home, "-w", "scope", "history", "import", str(write_session(tmp_path / "s.jsonl"))))
    ok(segue(home, "-w", "scope", "history", "migrate", "--to", pg_url))
    for what, phrase in {**FOUND, **NOT_FOUND}.items():
        args = ("-w", "scope", "history", "search", phrase, "--json")
        pg = segue(home, "--store", pg_url, *args)
        jsonl = segue(home, *args)
        assert (pg.returncode, pg.stdout) == (jsonl.returncode, jsonl.stdout), what
        assert pg.returncode == (0 if what in FOUND else 1), (what, pg.stderr)
        assert bool(json.loads(pg.stdout)["items"]) == (what in FOUND), what
    missing = segue(home, "--store", pg_url, "-w", "typo", "history", "windows")
    assert missing.returncode == 1
    assert b"no workspace typo" in missing.stderr
