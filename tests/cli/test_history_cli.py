"""``segue history`` end to end: a real store in a temp SEGUE_HOME, driven through the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from segue import HistoryStore, Layout, encode_row
from tests.front import cli
from tests.test_views import SECRET_PASTE, session_rows

WS = "demo"
SHARED_SESSION = Path(__file__).resolve().parents[3] / "shared/samples/xum-session/chat.jsonl"


def segue(home: Path, *args: str, workspace: str = WS) -> Result:
    return CliRunner().invoke(cli, ["--home", str(home), "-w", workspace, *args])


def write_session(path: Path) -> Path:
    """The fixture session as a Xum session file (sequences and workspace as another
    workspace wrote them: import must replace both)."""
    lines = [
        encode_row(r).replace(b'"metadata":{', b'"workspaceId":"elsewhere","metadata":{', 1)
        for r in session_rows(with_sequences=True)
    ]
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def as_json(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture
def imported(segue_home: Path, tmp_path: Path) -> Path:
    result = segue(segue_home, "history", "import", str(write_session(tmp_path / "session.jsonl")))
    assert result.exit_code == 0, result.output
    assert f"Imported 14 row(s) into workspace {WS}" in result.stdout
    return segue_home


def stored_rows(home: Path) -> list[Any]:
    return list(HistoryStore(Layout(home, WS)).rows())


def test_import_assigns_sequences_and_workspace(imported: Path) -> None:
    rows = stored_rows(imported)
    assert [r.id for r in rows] == [r.id for r in session_rows()]
    seqs = [r.sequence for r in rows]
    assert seqs == sorted(seqs) and len(set(seqs)) == 14
    assert {r.workspaceId for r in rows} == {WS}


def test_windows_items_read(imported: Path) -> None:
    seq = [r.sequence for r in stored_rows(imported)]
    windows = as_json(segue(imported, "history", "windows", "--json"))["windows"]
    assert [w["kind"] for w in windows] == ["root", "rollover", "reset", "compaction"]
    assert [w["items"] for w in windows] == [4, 4, 1, 2]
    rollover = windows[1]
    assert rollover["windowId"] == f"w:{seq[4]}"
    assert (rollover["firstItemId"], rollover["lastItemId"]) == (str(seq[6]), str(seq[9]))

    items = as_json(segue(imported, "history", "items", rollover["windowId"], "--json"))["items"]
    assert [i["itemId"] for i in items] == [str(seq[i]) for i in (6, 7, 8, 9)]
    assert items[0] == {
        "itemId": str(seq[6]),
        "windowId": rollover["windowId"],
        "role": "user",
        "timestamp": session_rows()[6].timestamp,
        "text": "Now run the linter.",
    }

    # the quarantined row is shown from its rejected original
    read = segue(imported, "history", "read", str(seq[8]))
    assert read.exit_code == 0
    assert "user (rejected)" in read.stdout and "PASTED-LOG" in read.stdout
    (item,) = as_json(segue(imported, "history", "read", str(seq[8]), "--json"))["items"]
    assert item["role"] == "user" and SECRET_PASTE.strip() in item["text"]

    human = segue(imported, "history", "windows")
    assert human.exit_code == 0 and "rollover" in human.stdout and "4 window(s)" in human.stdout
    listing = segue(imported, "history", "items", "w:0")
    assert "[tool bash]" in listing.stdout and "PRIVATE-THOUGHT" not in listing.stdout


def test_search_whole_transcript_with_header(imported: Path) -> None:
    result = segue(imported, "history", "search", "ENTRY POINT")
    assert result.exit_code == 0
    # Not a terminal: the output is the hits alone, like grep's (the frame is for terminals).
    assert result.stderr == ""
    hits = result.stdout.splitlines()
    assert len(hits) == 2 and all(line.startswith("#") for line in hits)
    doc = as_json(segue(imported, "history", "search", "pasted-log", "--json"))
    assert "whole transcript" in doc["scope"]
    assert [i["role"] for i in doc["items"]] == ["user"]
    assert "PASTED-LOG" in doc["items"][0]["text"]
    none = segue(imported, "history", "search", "no such words anywhere")
    assert none.exit_code == 1 and none.output == ""  # like grep


@pytest.mark.parametrize("fmt", ["md", "html", "json"])
def test_export_every_format(imported: Path, tmp_path: Path, fmt: str) -> None:
    out = tmp_path / f"t.{fmt}"
    result = segue(imported, "history", "export", "--format", fmt, "-o", str(out))
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    stdout = segue(imported, "history", "export", "--format", fmt)
    assert stdout.exit_code == 0 and stdout.stdout == text
    if fmt == "json":
        doc = json.loads(text)
        assert doc["rows"] == [json.loads(encode_row(r)) for r in stored_rows(imported)]
        assert [w["kind"] for w in doc["windows"]] == ["root", "rollover", "reset", "compaction"]
        return
    assert text.count("Context window rollover") == 1
    assert "Lint passed with no findings." in text and "entry point is src/main.py" in text
    assert "PASTED-LOG" in text
    assert "[segue] This conversation continues" not in text  # the lead-in stays hidden
    if fmt == "html":
        assert "<script>alert" not in text and "&lt;script&gt;" in text


def test_default_export_is_markdown(imported: Path) -> None:
    result = segue(imported, "history", "export")
    assert result.exit_code == 0 and result.stdout.startswith(f"# segue transcript: {WS}")


def test_import_refuses_a_bad_file_whole(segue_home: Path, tmp_path: Path) -> None:
    good = write_session(tmp_path / "s.jsonl").read_bytes()
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(good + b'{"not": "a row"}\n' + good)
    result = segue(segue_home, "history", "import", str(bad))
    assert result.exit_code == 1
    assert "segue: error:" in result.stderr and "15" in result.stderr  # names the line
    assert stored_rows(segue_home) == []
    windows = segue(segue_home, "history", "windows", "--json")
    assert windows.exit_code == 1  # the refused import did not even create the workspace
    assert f"no workspace {WS}" in windows.stderr


def test_verify_exit_codes(imported: Path) -> None:
    clean = segue(imported, "history", "verify")
    assert clean.exit_code == 0, clean.output
    assert "ok" in clean.stdout
    chat = Layout(imported, WS).chat
    with chat.open("ab") as f:  # a complete line that is not JSON: a warning, not damage
        f.write(b"this line is not json\n")
    # ... once a locked operation has taken the untracked change in (a new receipt epoch)
    HistoryStore(Layout(imported, WS)).recover()
    warned = as_json(segue(imported, "history", "verify", "--json"))
    assert warned["ok"] is True and warned["warnings"]
    with chat.open("ab") as f:  # a torn tail: a batch cut short by a crash
        f.write(b'{"id":"torn","role":"user","parts":[{"type":"te')
    torn = segue(imported, "history", "verify")
    assert torn.exit_code == 1
    assert "DAMAGED" in torn.stdout and "problem:" in torn.stdout
    doc = json.loads(segue(imported, "history", "verify", "--json").stdout)
    assert doc["ok"] is False and doc["problems"]


def test_bad_workspace_id_is_a_usage_error(segue_home: Path) -> None:
    result = segue(segue_home, "history", "windows", workspace="bad id!")
    assert result.exit_code == 2
    assert "invalid workspace id 'bad id!'" in result.stderr


def test_bad_and_unknown_ids(imported: Path) -> None:
    malformed = segue(imported, "history", "items", "window-1")
    assert malformed.exit_code == 2 and "invalid window id" in malformed.stderr
    missing = segue(imported, "history", "items", "w:9999")
    assert missing.exit_code == 1 and "no window w:9999" in missing.stderr
    gone = segue(imported, "history", "read", "9999")
    assert gone.exit_code == 1 and "no item 9999" in gone.stderr


def test_lone_surrogates_do_not_break_output(segue_home: Path, tmp_path: Path) -> None:
    f = tmp_path / "odd.jsonl"
    f.write_bytes(
        b'{"id":"x","role":"user","metadata":{},"parts":[{"type":"text","text":"a\\ud800b"}]}\n'
    )
    assert segue(segue_home, "history", "import", str(f)).exit_code == 0
    result = segue(segue_home, "history", "items", "w:0")
    assert result.exit_code == 0 and "a\\ud800b" in result.stdout


@pytest.mark.skipif(not SHARED_SESSION.exists(), reason="shared Xum sample not present")
def test_reads_a_real_segue_session(segue_home: Path) -> None:
    assert segue(segue_home, "history", "import", str(SHARED_SESSION)).exit_code == 0
    windows = as_json(segue(segue_home, "history", "windows", "--json"))["windows"]
    assert [(w["kind"], w["items"]) for w in windows] == [("root", 6)]
    hits = as_json(segue(segue_home, "history", "search", "preload", "--json"))["items"]
    assert len(hits) == 2


def test_a_deeply_nested_line_is_skipped_never_a_crash(segue_home: Path) -> None:
    layout = Layout(segue_home, WS)
    store = HistoryStore(layout, durable=False)
    store.append([session_rows(with_sequences=False)[0]])
    deep = b'{"id":"d","role":"user","parts":[{"type":"text","x":' + b"[" * 10_000
    deep += b"]" * 10_000 + b'}],"metadata":{"contextBoundaryKind":"reset"}}'
    with open(layout.chat, "ab") as f:
        f.write(deep + b"\n")
    for args in (("history", "windows"), ("history", "verify"), ("history", "search", "entry")):
        result = segue(segue_home, *args)
        assert result.exit_code == 0, (args, result.output)
        assert result.exception is None or isinstance(result.exception, SystemExit)
    windows = as_json(segue(segue_home, "history", "windows", "--json"))["windows"]
    assert windows and all(w["windowId"] for w in windows)
    call = json.dumps({"action": "list_windows"})
    answer = json.loads(segue(segue_home, "history", "tool", call).stdout)
    # the undecodable line holds the reset key: it is the floor, so nothing older is listed
    assert answer["ok"] is True
    assert [w["kind"] for w in answer["windows"]] == ["reset"]
    nested = segue(segue_home, "history", "tool", "[" * 100_000)
    assert json.loads(nested.stdout)["error"]["code"] == "invalid_argument"
