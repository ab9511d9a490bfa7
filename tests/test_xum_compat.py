"""Reading Xum's files as Xum means them, through the command line and the files on disk
(SPEC.md §3 "Rows Xum writes", "The receipt"; R5, R9, R25, R26, R29).

The fixtures in ``tests/data/xum`` are written from the spec, in the shapes Xum writes; a
receipt is written the way Xum writes it (compact JSON, decimal-string stamps).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from segue import HistoryStore, Layout, make_row
from tests.front import cli, read_rows
from tests.scripted_cli import script

DATA = Path(__file__).parent / "data" / "xum"
WS = "xumws"
SECRET = "sk-live-HIDDENSNAPSHOT42"


def segue(home: Path, *args: str, stdin: str | None = None) -> Result:
    return CliRunner().invoke(cli, ["--home", str(home), "-w", WS, *args], input=stdin)


def xum_session(home: Path, fixture: str) -> Layout:
    layout = Layout(home, WS)
    layout.session_dir.mkdir(parents=True)
    shutil.copyfile(DATA / fixture, layout.chat)
    return layout


def xum_stamp(path: Path) -> dict[str, str] | None:
    if not path.exists():
        return None
    st = os.stat(path)
    values = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    return dict(zip(("dev", "ino", "size", "mtimeNs", "ctimeNs"), map(str, values), strict=True))


def write_xum_receipt(layout: Layout, epoch: str, state: str = "stable") -> None:
    """What Xum writes: compact, no padding, exactly its four keys."""
    obj = {
        "version": 1,
        "epoch": epoch,
        "state": state,
        "files": {"chat": xum_stamp(layout.chat), "archive": xum_stamp(layout.archive)},
    }
    layout.receipt.write_text(json.dumps(obj, separators=(",", ":")))


def tool(home: Path, *calls: dict[str, Any]) -> list[dict[str, Any]]:
    result = segue(home, "history", "tool", stdin="".join(json.dumps(c) + "\n" for c in calls))
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stdout.splitlines()]


# -- windows, view, search -----------------------------------------------------------------------


def test_rollover_session_windows_and_view(tmp_path: Path) -> None:
    xum_session(tmp_path, "rollover.jsonl")
    windows = json.loads(segue(tmp_path, "history", "windows", "--json").stdout)["windows"]
    assert [(w["windowId"], w["kind"]) for w in windows] == [("w:0", "root"), ("w:4", "rollover")]
    items = json.loads(segue(tmp_path, "history", "items", "w:4", "--json").stdout)["items"]
    by_id = {i["itemId"]: i for i in items}
    # the human's tagged message is theirs; the lead-in is hidden
    assert by_id["6"]["role"] == "user"
    assert "5" not in by_id
    shown = segue(tmp_path, "history", "items", "w:4").stdout
    assert "Now run the linter" in shown
    line = next(x for x in shown.splitlines() if "Now run the linter" in x)
    assert "segue" not in line
    root = json.loads(segue(tmp_path, "history", "items", "w:0", "--json").stdout)["items"]
    assert "1" not in {i["itemId"] for i in root}  # the hidden snapshot row


def test_hidden_snapshot_row_never_comes_back_from_search(tmp_path: Path) -> None:
    xum_session(tmp_path, "rollover.jsonl")
    cli_search = segue(tmp_path, "history", "search", "HIDDENSNAPSHOT", "--json")
    assert cli_search.exit_code == 1, cli_search.output  # no match, as grep
    assert json.loads(cli_search.stdout)["items"] == []
    export = segue(tmp_path, "history", "export", "--format", "json")
    assert export.exit_code == 0
    (answer,) = tool(tmp_path, {"action": "search", "query": "HIDDENSNAPSHOT"})
    assert answer["ok"] is True and answer["items"] == []
    assert SECRET not in json.dumps(answer)
    # read_item of the hidden row is not an item either
    (read,) = tool(tmp_path, {"action": "read_item", "item_id": "1"})
    assert SECRET not in json.dumps(read)
    # what is visible is found, with a window id
    (hit,) = tool(tmp_path, {"action": "search", "match": "literal", "query": "entry point lives"})
    assert [i["windowId"] for i in hit["items"]] == ["w:0"]


def test_compaction_session_windows(tmp_path: Path) -> None:
    xum_session(tmp_path, "compaction.jsonl")
    windows = json.loads(segue(tmp_path, "history", "windows", "--json").stdout)["windows"]
    # the row without ``compacted`` is an ordinary row, not a boundary
    assert [(w["windowId"], w["kind"]) for w in windows] == [("w:0", "root"), ("w:2", "compaction")]
    items = json.loads(segue(tmp_path, "history", "items", "w:2", "--json").stdout)["items"]
    assert "3" not in {i["itemId"] for i in items}  # the synthetic Continue is hidden
    assert "4" in {i["itemId"] for i in items}


# -- the provider request ------------------------------------------------------------------------


def _requests(log: Path) -> list[dict[str, Any]]:
    return read_rows(log)


def test_continuing_a_xum_session_sends_the_humans_message_and_no_call_without_result(
    tmp_path: Path,
) -> None:
    layout = xum_session(tmp_path, "rollover.jsonl")
    write_xum_receipt(layout, str(uuid.uuid4()))
    model = script(tmp_path, [{"text": "Lint is clean."}], window=100_000)
    spec = json.loads(Path(model.removeprefix("scripted:")).read_text())
    spec["requestLog"] = str(tmp_path / "requests.jsonl")
    Path(model.removeprefix("scripted:")).write_text(json.dumps(spec))
    result = segue(tmp_path, "run", "-m", model, "--json", "and the tests?")
    assert result.exit_code == 0, result.output
    (request,) = _requests(tmp_path / "requests.jsonl")
    messages = request["messages"]
    texts = [p.get("text") for m in messages for p in m["parts"] if p["type"] == "text"]
    assert "Now run the linter on src/main.ts." in texts  # tagged continuation, not dropped
    assert "Running the linter now." in texts
    assert texts[-1] == "and the tests?"
    assert not any("entry point" in (t or "") for t in texts)  # the sealed window
    calls = [p for m in messages for p in m["parts"] if p["type"] == "dynamic-tool"]
    assert calls == []  # input-available / input-streaming stay on disk only
    assert b"input-available" in layout.chat.read_bytes()
    assert REJECTED not in json.dumps(messages)


REJECTED = "REJECTEDPASTE"


# -- the receipt -----------------------------------------------------------------------------------


def _keys_exactly_xums(obj: dict[str, Any]) -> None:
    assert set(obj) == {"version", "epoch", "state", "files"}
    assert obj["version"] == 1
    assert str(uuid.UUID(obj["epoch"])) == obj["epoch"].lower()
    assert obj["state"] in ("pending", "stable")
    assert set(obj["files"]) == {"chat", "archive"}
    for stamp in obj["files"].values():
        if stamp is not None:
            assert set(stamp) == {"dev", "ino", "size", "mtimeNs", "ctimeNs"}
            assert all(isinstance(v, str) and v.isdigit() for v in stamp.values())


def test_segues_receipt_is_xums_format(tmp_path: Path) -> None:
    store = HistoryStore(Layout(tmp_path, WS), durable=False)
    store.append([make_row("user", "hello", id="u1")])
    raw = store.layout.receipt.read_bytes()
    assert len(raw) <= 4096
    obj = json.loads(raw)
    _keys_exactly_xums(obj)
    assert obj["state"] == "stable"
    assert obj["files"]["chat"] == xum_stamp(store.layout.chat)
    assert obj["files"]["archive"] is None


def test_a_xum_receipt_is_honoured_and_verify_is_clean(tmp_path: Path) -> None:
    layout = xum_session(tmp_path, "rollover.jsonl")
    write_xum_receipt(layout, str(uuid.uuid4()))
    verify = segue(tmp_path, "history", "verify")
    assert verify.exit_code == 0, verify.output
    # segue appends on top, numbering after Xum's rows, and republishes in Xum's format
    HistoryStore(layout, durable=False).append([make_row("user", "from segue", id="s1")])
    last = json.loads(layout.chat.read_bytes().splitlines()[-1])
    assert last["metadata"]["historySequence"] == 10
    _keys_exactly_xums(json.loads(layout.receipt.read_bytes()))
    assert segue(tmp_path, "history", "verify").exit_code == 0


def test_an_append_xum_made_expires_cursors_and_is_not_damage(tmp_path: Path) -> None:
    layout = Layout(tmp_path, WS)
    store = HistoryStore(layout, durable=False)
    store.append([make_row("user", f"note {i} MARKER", id=f"u{i}") for i in range(40)])
    epoch = json.loads(layout.receipt.read_bytes())["epoch"]
    first = {"action": "search", "query": "MARKER", "limit": 5}
    # Xum appends a row and republishes its receipt: same epoch, new stamps (its verified append)
    xum_row = {
        "id": "xum-1", "role": "user", "metadata": {"timestamp": 1, "historySequence": 40},
        "parts": [{"type": "text", "text": "written by Xum", "state": "done"}],
        "workspaceId": WS,
    }
    # one process pages across Xum's append (cursors live per process): the cursor expires
    proc = subprocess.Popen(
        [sys.executable, "-m", "segue", "--home", str(tmp_path), "-w", WS, "history", "tool"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(first) + "\n")
    proc.stdin.flush()
    page = json.loads(proc.stdout.readline())
    cursor = page["nextCursor"]
    assert cursor
    with open(layout.chat, "ab") as f:
        f.write(json.dumps(xum_row, separators=(",", ":")).encode() + b"\n")
    write_xum_receipt(layout, epoch)
    proc.stdin.write(json.dumps({**first, "cursor": cursor}) + "\n")
    proc.stdin.flush()
    after = json.loads(proc.stdout.readline())
    proc.stdin.close()
    proc.stdout.close()
    assert proc.wait(timeout=60) == 0
    assert after["ok"] is False and after["error"]["code"] == "stale_cursor", after
    verify = segue(tmp_path, "history", "verify")
    assert verify.exit_code == 0, verify.output
    # the next segue row is numbered above Xum's
    store.append([make_row("user", "after xum", id="s2")])
    newest = json.loads(layout.chat.read_bytes().splitlines()[-1])
    assert newest["metadata"]["historySequence"] == 41


def test_an_append_without_a_receipt_update_is_not_damage(tmp_path: Path) -> None:
    layout = Layout(tmp_path, WS)
    HistoryStore(layout, durable=False).append([make_row("user", "one", id="u1")])
    with open(layout.chat, "ab") as f:
        f.write(b'{"id":"x","role":"user","metadata":{},"parts":[]}\n')
    verify = segue(tmp_path, "history", "verify")
    assert verify.exit_code == 0, verify.output
    assert "untracked append" in verify.output


def test_a_shrunk_transcript_is_still_damage(tmp_path: Path) -> None:
    layout = Layout(tmp_path, WS)
    store = HistoryStore(layout, durable=False)
    store.append([make_row("user", "one", id="u1"), make_row("user", "two", id="u2")])
    data = layout.chat.read_bytes()
    layout.chat.write_bytes(data[: data.index(b"\n") + 1])
    assert segue(tmp_path, "history", "verify").exit_code == 1


def test_malformed_xum_receipts_are_not_trusted(tmp_path: Path) -> None:
    """A receipt file that is not exactly SPEC.md §3's shape is reported, never trusted."""
    layout = Layout(tmp_path, WS)
    HistoryStore(layout, durable=False).append([make_row("user", "one", id="u1")])
    receipt = layout.session_dir / "history-append-provenance.json"
    good: dict[str, Any] = json.loads(receipt.read_text())
    assert set(good) == {"version", "epoch", "state", "files"} and good["state"] == "stable"
    assert uuid.UUID(good["epoch"]) and good["files"]["archive"] is None
    stamp = good["files"]["chat"]
    assert set(stamp) == {"dev", "ino", "size", "mtimeNs", "ctimeNs"}
    assert all(isinstance(v, str) and v.isdecimal() for v in stamp.values())
    untrusted = "receipt history-append-provenance.json is not trusted"

    def verify(data: str) -> Result:
        receipt.write_text(data)
        return segue(tmp_path, "history", "verify")

    trusted = verify(json.dumps(good))
    assert trusted.exit_code == 0 and untrusted not in trusted.output, trusted.output
    bad: list[dict[str, Any]] = [
        {**good, "extra": 1},
        {**good, "version": "1"},
        {**good, "version": True},
        {**good, "epoch": "not-a-uuid"},
        {**good, "state": "done"},
        {**good, "files": {"chat": stamp}},
        {**good, "files": {"chat": {**stamp, "size": int(stamp["size"])}, "archive": None}},
        {**good, "files": {"chat": {**stamp, "size": "-" + stamp["size"]}, "archive": None}},
        {**good, "files": {"chat": {**stamp, "x": "1"}, "archive": None}},
    ]
    for data in [*(json.dumps(obj) for obj in bad), "[" * 10_000]:
        result = verify(data)
        assert result.exit_code == 1 and untrusted in result.output, (data[:200], result.output)
    assert verify(json.dumps(good)).exit_code == 0
