"""The user's own view is complete (rows over 1 MiB are in every view and export), and
mistyped rows (a role that is an object or a list, 1,000+ levels of nesting) are
unparseable lines: kept byte-exact, skipped by readers, reported by verify, and a floor
when they may be a reset (R11)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.hostile.harness import (
    exported_rows,
    fault,
    jsonl,
    ok,
    one_error,
    reset_row,
    row,
    seed,
    segue,
    session,
)

BIG = 1536 * 1024  # 1.5 MiB, over R24's 1 MiB line bound for the model's tool


def _deep(levels: int) -> str:
    return "[" * levels + "]" * levels


def test_rows_over_one_mebibyte_are_in_every_user_view(tmp_path: Path) -> None:
    home = tmp_path / "home"
    old = "OLDHEAD " + "a" * BIG + " OLDTAIL"
    new = "NEWHEAD " + "b" * BIG + " NEWTAIL"
    # the first big row ends up in the archive (a boundary follows it), the second in chat
    seed(home, [row(0, old), reset_row(1), row(2, new)], tmp_path / "scratch")
    assert (session(home) / "chat-archive.jsonl").stat().st_size > BIG
    fault("rows over 1 MiB: export json")
    texts = [r["parts"][0]["text"] for r in exported_rows(home) if r["parts"]]
    assert texts == [old, new]
    for fmt in ("md", "html"):
        fault(f"rows over 1 MiB: export {fmt}")
        out = ok(segue(home, "history", "export", "--format", fmt)).out
        for mark in (b"OLDHEAD", b"OLDTAIL", b"NEWHEAD", b"NEWTAIL"):
            assert mark in out
    fault("rows over 1 MiB: items")
    items = json.loads(ok(segue(home, "history", "items", "w:0", "--json")).out)["items"]
    assert [i["itemId"] for i in items] == ["0"]
    assert items[0]["text"] == old
    fault("rows over 1 MiB: search")
    hits = json.loads(ok(segue(home, "history", "search", "newtail", "--json")).out)["items"]
    assert [h["itemId"] for h in hits] == ["2"]
    fault("rows over 1 MiB: read")
    read = ok(segue(home, "history", "read", "0")).out
    assert read.rstrip().endswith(b"OLDTAIL")
    assert len(read) > BIG
    windows = json.loads(ok(segue(home, "history", "windows", "--json")).out)["windows"]
    assert [w["items"] for w in windows] == [1, 1]


MISTYPED = [
    b'{"id":"m-role-object","role":{"user":1},"parts":[],"metadata":{}}',
    b'{"id":"m-role-list","role":["user"],"parts":[],"metadata":{}}',
    b'{"id":"m-deep","role":"user","parts":[],"metadata":{"x":' + _deep(1200).encode() + b"}}",
    b'{"id":"m-parts","role":"user","parts":{"0":{"type":"text"}},"metadata":{}}',
    b'{"id":"m-meta","role":"user","parts":[],"metadata":[1,2]}',
    b'{"id":["not","a","string"],"role":"user","parts":[],"metadata":{}}',
]
#: a reset row nobody can decode (too deep, a role that is an object): still a floor (R11)
MISTYPED_RESETS = [
    b'{"id":"f-deep","role":"assistant","parts":[],"metadata":{"contextBoundaryKind":"reset",'
    b'"pad":' + _deep(1500).encode() + b"}}",
    b'{"id":"f-role","role":{"assistant":true},"parts":[],'
    b'"metadata":{"contextBoundaryKind":"reset"}}',
]


def _foreign_session(home: Path, lines: list[bytes]) -> Path:
    """A transcript another writer produced (no receipt: a copied Xum session)."""
    s = session(home)
    s.mkdir(parents=True)
    chat = s / "chat.jsonl"
    chat.write_bytes(b"".join(line + b"\n" for line in lines))
    return chat


def test_mistyped_rows_are_skipped_kept_and_reported(tmp_path: Path) -> None:
    home = tmp_path / "home"
    good = [json.dumps(row(0, "plain words")).encode()]
    chat = _foreign_session(home, good + MISTYPED + [json.dumps(row(2, "more words")).encode()])
    before = chat.read_bytes()
    for args in (
        ("history", "windows"),
        ("history", "items", "w:0"),
        ("history", "read", "m:r2"),
        ("history", "search", "words"),
        ("history", "export", "--format", "md"),
        ("history", "export", "--format", "html"),
        ("history", "tool", '{"action":"search","query":"words"}'),
        ("history", "tool", '{"action":"list_items","window_id":"w:0"}'),
    ):
        fault(f"mistyped rows: {' '.join(args)}")
        r = ok(segue(home, *args))
        assert b"m-role" not in r.out
    fault("mistyped rows: export json")
    assert [r["id"] for r in exported_rows(home)] == ["r0", "r2"]
    fault("mistyped rows: verify")
    report = ok(segue(home, "history", "verify")).out.decode()
    assert report.count("not a row, skipped") == len(MISTYPED)
    assert chat.read_bytes() == before
    # a writer keeps them byte-exact
    extra = tmp_path / "extra.jsonl"
    extra.write_bytes(jsonl([row(10, "appended")]))
    fault("mistyped rows: import after them")
    ok(segue(home, "history", "import", str(extra)))
    assert chat.read_bytes().startswith(before)
    assert [r["id"] for r in exported_rows(home)] == ["r0", "r2", "r10"]


def test_an_import_file_with_a_mistyped_row_is_refused_whole(tmp_path: Path) -> None:
    home = tmp_path / "home"
    seed(home, [row(0)], tmp_path / "scratch")
    chat = session(home) / "chat.jsonl"
    before = chat.read_bytes()
    for bad in MISTYPED + MISTYPED_RESETS:
        f = tmp_path / "bad.jsonl"
        f.write_bytes(jsonl([row(5)]) + bad + b"\n")
        fault("mistyped row in an import file")
        line = one_error(segue(home, "history", "import", str(f)))
        assert "line 2 is not a row" in line
    assert chat.read_bytes() == before


def test_a_mistyped_reset_row_is_a_floor(tmp_path: Path) -> None:
    for floor in MISTYPED_RESETS:
        home = tmp_path / floor[8:14].decode()
        lines = [
            json.dumps(row(0, "SECRET before the reset")).encode(),
            floor,
            json.dumps(row(2, "visible after the reset")).encode(),
        ]
        _foreign_session(home, lines)
        fault("mistyped reset row: history tool")
        call = '{"action":"search","query":"reset"}'
        out = json.loads(ok(segue(home, "history", "tool", call)).out)
        assert [i["text"] for i in out["items"]] == ["visible after the reset"]
        # the user's own view still has everything above and below it
        assert [r["id"] for r in exported_rows(home)] == ["r0", "r2"]
