"""``segue mcp serve`` over a PostgreSQL store, through the ``mcp`` SDK's own client: it
serves the workspace's configured store, never the JSONL files a migrate left behind, and a
floor appended in PostgreSQL after the migrate hides everything before it (R11, SPEC.md §8-9).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from segue._context.rollover import manual_reset_row
from segue._messages import make_row
from segue.postgres._store import PostgresStore
from tests.mcp.helpers import run_client, subprocess_env, write_history

WS = "demo"


def _obj(result: Any) -> dict[str, Any]:
    text = json.loads(result.content[0].text)
    assert result.structured_content == text
    return dict(text)


def _segue(home: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "segue._cli.main", *args],
        env=subprocess_env(home), capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def migrated(pg_url: str, tmp_path: Path) -> Path:
    """A JSONL history migrated to PostgreSQL (its files left in place), then a floor and a
    new row appended in PostgreSQL only."""
    home = tmp_path / "home"
    write_history(home, WS, ["secret plans before the clear", "more secret talk"],
                  floor_after=None)
    _segue(home, "-w", WS, "history", "migrate", "--to", pg_url)
    store = PostgresStore(pg_url, WS)
    try:
        store.append([manual_reset_row(row_id="reset-pg", now_ms=1_700_000_100_000)])
        store.append([make_row("user", "fresh note after the clear", id="fresh",
                               metadata={"timestamp": 1_700_000_200_000})])
    finally:
        store.close()
    assert (home / "sessions").exists()  # the migrate's source is still there
    return home


async def _calls(client: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, args in {
        "secret": {"action": "search", "query": "secret"},
        "secret_literal": {"action": "search", "query": "secret", "match": "literal"},
        "fresh": {"action": "search", "query": "fresh note"},
        "windows": {"action": "list_windows"},
    }.items():
        out[key] = _obj(await client.call_tool("session_history", args))
    wid = out["windows"]["windows"][0]["windowId"]
    out["items"] = _obj(await client.call_tool(
        "session_history", {"action": "list_items", "window_id": wid, "limit": 25}))
    return out


def _check(out: dict[str, Any]) -> None:
    assert out["secret"]["ok"] is True
    assert out["secret"]["items"] == []  # R11: nothing from before the PostgreSQL floor
    assert out["secret_literal"]["items"] == []
    assert [i["text"] for i in out["fresh"]["items"]] == ["fresh note after the clear"]
    assert len(out["windows"]["windows"]) == 1
    assert [i["text"] for i in out["items"]["items"]] == ["fresh note after the clear"]


def test_mcp_serve_answers_from_the_store_option(migrated: Path, pg_url: str) -> None:
    _check(run_client(migrated, ["--store", pg_url, "mcp", "serve", "-w", WS], _calls))


def test_mcp_serve_answers_from_the_store_url_setting(migrated: Path, pg_url: str) -> None:
    _segue(migrated, "settings", "set", "store.url", pg_url)
    _check(run_client(migrated, ["mcp", "serve", "-w", WS], _calls))
