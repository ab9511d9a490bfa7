"""The PostgreSQL store through the command line, against a real server: store init, the
--store option and the store.url setting, migrate round trips (byte-exact), and every
reading command answering exactly as on the JSONL store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from segue.postgres._schema import SCHEMA_VERSION
from tests.postgres.cluster import Cluster

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = Path(__file__).parent / "data" / "session.jsonl"


def segue(home: Path, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run(
        [sys.executable, "-m", "segue", "--home", str(home), *args],
        input=stdin, capture_output=True, env=env, timeout=120, check=False,
    )


def ok(result: subprocess.CompletedProcess[bytes]) -> bytes:
    assert result.returncode == 0, result.stderr.decode()
    return result.stdout


def files(home: Path, ws: str) -> dict[str, bytes]:
    d = home / "sessions" / ws
    names = ("chat-archive.jsonl", "chat.jsonl")
    return {n: (d / n).read_bytes() for n in names if (d / n).exists()}


def demo_home(tmp_path: Path) -> Path:
    home = tmp_path / "jsonl"
    ok(segue(home, "demo", "--keep"))
    return home


def test_store_init_creates_the_schema_once(pg_url: str, tmp_path: Path) -> None:
    first = ok(segue(tmp_path, "store", "init", pg_url)).decode()
    assert f"schema version {SCHEMA_VERSION}" in first
    again = ok(segue(tmp_path, "store", "init", pg_url)).decode()
    assert f"schema version {SCHEMA_VERSION}" in again
    import psycopg

    with psycopg.connect(pg_url) as conn:
        versions = [r[0] for r in conn.execute("SELECT version FROM segue_schema").fetchall()]
        ext = conn.execute("SELECT 1 FROM pg_extension WHERE extname='pg_trgm'").fetchone()
        index = conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = 'segue_rows_lit'"
        ).fetchone()
    assert versions == list(range(1, SCHEMA_VERSION + 1))
    assert ext is None  # literal search needs no extension (schema 5)
    assert index is not None and "gin (lit)" in index[0]


def test_first_use_creates_the_schema(pg_url: str, tmp_path: Path) -> None:
    ok(segue(tmp_path, "--store", pg_url, "-w", "a", "history", "import", str(SAMPLE)))
    out = json.loads(ok(segue(tmp_path, "--store", pg_url, "-w", "a", "history", "windows",
                              "--json")))
    assert out["windows"][0]["items"] == 6


def test_no_server_is_one_clear_line(tmp_path: Path) -> None:
    url = f"postgresql://postgres@/x?host={tmp_path}&port=1"
    result = segue(tmp_path, "--store", url, "history", "windows")
    assert result.returncode == 1
    err = result.stderr.decode()
    assert err.startswith("segue: error: cannot connect to the PostgreSQL store")
    assert err.count("\n") == 1
    assert "Traceback" not in err


def test_bad_store_urls_are_usage_errors(tmp_path: Path) -> None:
    result = segue(tmp_path, "--store", "mysql://db/x", "history", "windows")
    assert result.returncode == 2
    assert "postgresql://" in result.stderr.decode()
    bad = segue(tmp_path, "settings", "set", "store.url", "sqlite:///x")
    assert bad.returncode == 2


def test_a_server_refusing_the_schema_is_one_clear_line(
    pg_cluster: Cluster, pg_url: str, tmp_path: Path
) -> None:
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE ROLE weak LOGIN")
        conn.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
    weak = pg_url.replace("postgres@", "weak@")
    result = segue(tmp_path, "store", "init", weak)
    assert result.returncode == 1
    err = result.stderr.decode()
    assert err.startswith("segue: error: cannot create the segue schema in PostgreSQL")
    assert err.count("\n") == 1


def test_no_extension_is_needed(pg_url: str, tmp_path: Path) -> None:
    """A database without pg_trgm, and a role that may create tables but not extensions:
    `store init`, an import, both searches and a migrate back all work, and no extension
    was created on the way."""
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE ROLE noext LOGIN")
        conn.execute("GRANT CREATE ON SCHEMA public TO noext")
    url = pg_url.replace("postgres@", "noext@")
    home = tmp_path / "home"
    assert b"ready (schema version" in ok(segue(home, "store", "init", url))
    ok(segue(home, "--store", url, "-w", "x", "history", "import", str(SAMPLE)))
    people = ok(segue(home, "--store", url, "-w", "x", "history", "search", "ETRY.TO"))
    assert b"retry.toml" in people
    tool = json.loads(ok(segue(home, "--store", url, "-w", "x", "history", "tool",
                               '{"action":"search","match":"literal","query":"fig/retr"}')))
    assert tool["ok"] and tool["items"], tool
    ok(segue(home, "--store", url, "-w", "x", "history", "migrate", "--to",
             str(tmp_path / "h2")))
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert conn.execute(
            "SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'"
        ).fetchone() is None


def test_store_url_setting_selects_the_store(pg_url: str, tmp_path: Path) -> None:
    ok(segue(tmp_path, "settings", "set", "store.url", pg_url))
    ok(segue(tmp_path, "-w", "s", "history", "import", str(SAMPLE)))
    assert not (tmp_path / "sessions" / "s").exists()  # nothing went to the JSONL files
    got = ok(segue(tmp_path, "--store", pg_url, "-w", "s", "history", "verify"))
    assert b"ok (6 rows in 6 lines" in got


def test_demo_round_trip_is_byte_exact(pg_url: str, tmp_path: Path) -> None:
    home = demo_home(tmp_path)
    before = files(home, "demo")
    assert before["chat-archive.jsonl"] and before["chat.jsonl"]  # the demo rolled over
    out = ok(segue(home, "-w", "demo", "history", "migrate", "--to", pg_url)).decode()
    assert "verified" in out
    back = tmp_path / "back"
    ok(segue(back, "--store", pg_url, "history", "migrate", "-w", "demo", "--to", str(back)))
    assert files(back, "demo") == before
    ok(segue(back, "-w", "demo", "history", "verify"))
    # and the copy continues: the next sequence is the source's
    nxt = ok(segue(back, "-w", "demo", "history", "import", str(SAMPLE))).decode()
    src_next = ok(segue(home, "-w", "demo", "history", "import", str(SAMPLE))).decode()
    assert nxt == src_next


def test_migrate_refuses_a_target_with_history(pg_url: str, tmp_path: Path) -> None:
    ok(segue(tmp_path, "-w", "t", "history", "import", str(SAMPLE)))
    ok(segue(tmp_path, "-w", "t", "history", "migrate", "--to", pg_url))
    again = segue(tmp_path, "-w", "t", "history", "migrate", "--to", pg_url)
    assert again.returncode == 1
    assert "already has history" in again.stderr.decode()
    onto = segue(tmp_path, "--store", pg_url, "-w", "t", "history", "migrate", "--to",
                 str(tmp_path))
    assert onto.returncode == 1
    assert "already has a transcript" in onto.stderr.decode()


READS = [
    ("history", "windows", "--json"),
    ("history", "windows"),
    ("history", "items", "w:0", "--json"),
    ("history", "read", "3", "--json"),
    ("history", "search", "file"),
    ("history", "search", "SESSION_HISTORY", "--json"),
    ("history", "search", "--words", "file sessions"),  # through each store's backend
    ("history", "search", "--words", "--json", "searching the history"),
    ("history", "search", "--words", "zebracorn"),
    ("history", "export", "--format", "json"),
    ("history", "export", "--format", "md"),
    ("history", "verify", "--json"),
]


def test_reading_commands_answer_alike(pg_url: str, tmp_path: Path) -> None:
    home = demo_home(tmp_path)
    ok(segue(home, "-w", "demo", "history", "migrate", "--to", pg_url))
    windows = json.loads(ok(segue(home, "-w", "demo", "history", "windows", "--json")))
    later = [w["windowId"] for w in windows["windows"]][1:]
    assert later, "the demo rolls over"
    extra = [("history", "items", w, "--json") for w in later]
    for args in [*READS, *extra]:
        jsonl = segue(home, "-w", "demo", *args)
        pg = segue(home, "--store", pg_url, "-w", "demo", *args)
        assert (pg.returncode, pg.stdout) == (jsonl.returncode, jsonl.stdout), args


def test_session_history_tool_command_uses_the_store(pg_url: str, tmp_path: Path) -> None:
    home = demo_home(tmp_path)
    ok(segue(home, "-w", "demo", "history", "migrate", "--to", pg_url))
    ok(segue(home, "-w", "demo", "history", "reindex"))  # the JSONL store with its index
    calls = (b'{"action":"list_windows"}\n'
             b'{"action":"search","match":"literal","query":"the","limit":2}\n'
             b'{"action":"search","match":"literal","query":"THE","role":"assistant","order":"oldest"}\n'
             b'{"action":"list_items","window_id":"w:0","limit":3}\n'
             b'{"action":"read_item","item_id":"3","limit_chars":40}\n')
    jsonl = ok(segue(home, "-w", "demo", "history", "tool", stdin=calls)).splitlines()
    before = sorted(home.rglob("*"))
    pg = ok(segue(home, "--store", pg_url, "-w", "demo", "history", "tool", stdin=calls))
    # a read command: answering from PostgreSQL writes nothing under the home
    assert sorted(home.rglob("*")) == before
    for a, b in zip(jsonl, pg.splitlines(), strict=True):
        x, y = json.loads(a), json.loads(b)
        assert x["ok"] is True
        assert (x.pop("nextCursor") is None) == (y.pop("nextCursor") is None)
        assert x == y


def test_demo_refuses_an_explicit_store(tmp_path: Path) -> None:
    result = segue(tmp_path, "--store", "postgresql://nobody@/x", "demo")
    assert result.returncode == 2
    assert "without --store" in result.stderr.decode()


def test_run_and_clear_go_to_the_store(pg_url: str, tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({
        "contextWindow": 100000, "encoding": "o200k_base",
        "responses": [{"text": "stored in PostgreSQL"}],
    }))
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    run = subprocess.run(
        [sys.executable, "-m", "segue", "--home", str(tmp_path / "h"), "--store", pg_url,
         "-w", "r", "run", "-m", f"scripted:{script}", "--json", "hello there"],
        capture_output=True, env=env, cwd=work, timeout=120, check=False,
    )
    assert run.returncode == 0, run.stderr.decode()
    assert json.loads(run.stdout.splitlines()[-1])["status"] == "completed"
    assert not (tmp_path / "h" / "sessions" / "r" / "chat.jsonl").exists()
    items = json.loads(ok(segue(tmp_path / "h", "--store", pg_url, "-w", "r", "history",
                                "items", "w:0", "--json")))["items"]
    assert [i["text"] for i in items] == ["hello there", "stored in PostgreSQL"]
    soft = ok(segue(tmp_path / "h", "--store", pg_url, "-w", "r", "clear", "--soft"))
    assert b"cleared" in soft
    windows = json.loads(ok(segue(tmp_path / "h", "--store", pg_url, "-w", "r", "history",
                                  "windows", "--json")))["windows"]
    assert [w["kind"] for w in windows] == ["root", "reset"]


def test_a_newer_schema_is_refused_clearly(pg_url: str, tmp_path: Path) -> None:
    ok(segue(tmp_path, "store", "init", pg_url))
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("INSERT INTO segue_schema (version) VALUES (%s)", (SCHEMA_VERSION + 1,))
    result = segue(tmp_path, "--store", pg_url, "history", "windows")
    assert result.returncode == 1
    err = result.stderr.decode()
    assert err.startswith("segue: error: ") and "upgrade segue" in err
    assert err.count("\n") == 1


def test_verify_reports_damage_in_the_table(pg_url: str, tmp_path: Path) -> None:
    ok(segue(tmp_path, "--store", pg_url, "-w", "v", "history", "import", str(SAMPLE)))
    ok(segue(tmp_path, "--store", pg_url, "-w", "v", "history", "verify"))
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("UPDATE segue_workspaces SET next_sequence = 3 WHERE workspace = 'v'")
        conn.execute("UPDATE segue_rows SET off = off + 1 WHERE workspace = 'v' AND pos = 4")
    result = segue(tmp_path, "--store", pg_url, "-w", "v", "history", "verify", "--json")
    assert result.returncode == 1
    problems = json.loads(result.stdout)["problems"]
    assert any("next sequence 3" in p for p in problems)
    assert any("offset" in p for p in problems)
