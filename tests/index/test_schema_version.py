"""The index's schema version (SPEC.md §7, R35): an index is "of another schema version"
exactly when the version it names differs, so a release that leaves the rows alone keeps
every existing index, and one that changes them must bump ``SCHEMA_VERSION``.

This test pins a digest of the DDL and of the rows a fixed transcript becomes (every kind of
line R11, R25 and R27 name). Changing either without a bump fails here; after a bump, pin the
digest the failure prints under the new version."""

from __future__ import annotations

import hashlib
import re
import sqlite3
from pathlib import Path

from segue._retrieval import index_file
from segue._retrieval.index_build import rebuild
from segue._retrieval.index_file import SCHEMA_VERSION, index_path, read_meta, schema_id
from segue._workspace import Layout
from tests.retrieval.helpers import stamp_receipt, write_history

#: digest of the DDL and of the corpus's rows, per schema version
PINNED = {
    2: "8e1a0c80823c9c792ceb696e00f22b90",
    3: "fce4d8f48cc5c522200df46bf2ee0006",
    4: "7e73ce5e370b3e96a194050b3113b1b9",
    # 5: a token longer than LEX_MAX is kept as its windows (no such token in this corpus)
    5: "7e73ce5e370b3e96a194050b3113b1b9",
    # 6: a partial index of the rows every literal query reads (risky 1 and 2)
    6: "a2e1281ba39f1b29450e0502cb55383d",
    # 7: the people's words search: rows.plen and the pwords table
    7: "5ed31e9409dde3aa4dd5a7369dd01ac5",
    # 8: a word's term is its Porter stem cut to 5 characters (stem.STEM_CHARS)
    8: "e70f802b4b8917c3e1dc7ef61dc65e1d",
}

_META = b'"metadata":{"timestamp":1700000000000,"historySequence":%d}'
_ROLLOVER = (
    b'{"id":"b3","role":"assistant","metadata":{"timestamp":1,"contextBoundaryKind":"reset",'
    b'"rolloverId":"ro3","muxMetadata":{"type":"context-window-rollover","rolloverId":"ro3",'
    b'"reason":"on-send","previousWindowId":"w:0","flushOpportunity":false,"contextTokens":10,'
    b'"maxTokens":100},"historySequence":3},"parts":[]}'
)
ARCHIVE = [
    b'{"id":"s0","role":"system",' + _META % 0 + b',"parts":[{"type":"text","text":"sys"}]}',
    b'{"id":"u1","role":"user",' + _META % 1 + b',"parts":[{"type":"text","text":"hello"}]}',
    b'{"id":"a2","role":"assistant",' + _META % 2 + b',"parts":[{"type":"reasoning",'
    b'"text":"hmm"},{"type":"text","text":"Kelvin \\u212a and \\u0130stanbul"},'
    b'{"type":"dynamic-tool","toolName":"bash","toolCallId":"c1","state":"output-available",'
    b'"input":{"cmd":"ls"},"output":{"stdout":"a\\nb","image":{"type":"image","data":"x"}}},'
    b'{"type":"tool-file_read","toolCallId":"c2","state":"output-error","input":{"p":1},'
    b'"errorText":"no such file"},{"type":"dynamic-tool","toolName":"session_history",'
    b'"toolCallId":"c3","state":"output-available","input":{},"output":"old answer"}]}',
    _ROLLOVER,
    b'{"id":"f4","role":"user",' + _META % 4 + b',"parts":[{"type":"file","url":"x"}]}',
    b'{"id":"h5","role":"user","metadata":{"historySequence":5,"synthetic":true},'
    b'"parts":[{"type":"text","text":"hidden lead-in"}]}',
    b'{"id":"v6","role":"user","metadata":{"historySequence":6,"synthetic":true,'
    b'"uiVisible":true},"parts":[{"type":"text","text":"visible synthetic"}]}',
    # a clean line: the key and value elsewhere than the row's own kind make no floor (R11)
    b'{"id":"n6","role":"assistant","metadata":{"contextBoundaryKind":"normal","other":"reset"}'
    b',"parts":[{"type":"dynamic-tool","toolName":"bash","toolCallId":"c9","state":'
    b'"output-available","input":{"contextBoundaryKind":"reset","value":"tool facts"},'
    b'"output":"ok"}]}',
]
CHAT = [
    b'{"id":"q7","role":"user","metadata":{"historySequence":7,"contextBudgetRejected":true},'
    b'"parts":[{"type":"text","text":"quarantined"}]}',
    b'{"id":"c8","role":"assistant","metadata":{"timestamp":1,"contextBoundaryKind":"reset",'
    b'"uiVisible":false,"historySequence":8},"parts":[]}',
    b'{"id":"k9","role":"assistant","metadata":{"historySequence":9,"compactionBoundary":true,'
    b'"compacted":true,"compactionEpoch":1},"parts":[{"type":"text","text":"summary"}]}',
    b'{"id":"m","role":"user","metadata":{},"parts":[{"type":"text","text":"no sequence"}]}',
    b'{"id":"u1b","role":"user",' + _META % 1 + b',"parts":[{"type":"text","text":"reused"}]}',
    b'{"id":"x","metadata":{"context\\u0042oundaryKind":"reset"',  # undecodable floor
    b"not json at all",
    b'{"id":"s10","role":"user",' + _META % 10 + b',"parts":[{"type":"text","text":"\\ud800"}]}',
    b'{"id":"' + b"i" * 300 + b'","role":"user","metadata":{},"parts":[{"type":"text",'
    b'"text":"id too long"}]}',
    # a duplicate key: the bytes decide, so the reset key the decoded value lost still counts
    b'{"id":"d11","role":"user","metadata":{"historySequence":11},"parts":[{"type":"text",'
    b'"text":"dup"}],"metadata":{"contextBoundaryKind":"reset","contextBoundaryKind":"none"}}',
]


def _normal(sql: str) -> str:
    return " ".join(re.sub(r"--[^\n]*", "", sql).split())


def _digest(tmp: Path) -> str:
    layout = Layout(tmp, "ws")
    write_history(layout, ARCHIVE, CHAT, receipt=False)
    with open(layout.chat, "ab") as f:
        f.write(b'{"id":"torn"')  # a tail without its newline is not indexed
    stamp_receipt(layout)
    rebuild(layout)
    h = hashlib.sha256(_normal(index_file.DDL).encode())
    conn = sqlite3.connect(index_path(layout))
    try:
        for row in conn.execute("SELECT * FROM rows ORDER BY pos"):
            h.update(repr(row).encode())
        for table in ("lit", "words", "pwords"):  # every token and how many rows hold it
            conn.execute(f"CREATE VIRTUAL TABLE temp.v_{table} USING fts5vocab(main, {table}, row)")
            vocab = conn.execute(f"SELECT * FROM v_{table} ORDER BY term").fetchall()
            h.update(repr(vocab).encode())
        h.update(repr(conn.execute("SELECT term FROM lex ORDER BY term").fetchall()).encode())
        meta = read_meta(conn)
    finally:
        conn.close()
    stable = (meta.archive_size, meta.chat_read, meta.win, meta.wid, meta.hwin, meta.complete)
    h.update(repr(stable).encode())
    return h.hexdigest()[:32]


def test_the_ddl_and_row_derivation_match_the_pinned_schema_version(tmp_path: Path) -> None:
    digest = _digest(tmp_path)
    assert PINNED.get(SCHEMA_VERSION) == digest, (
        f"the index's DDL or what lines become in it changed (digest {digest}): bump "
        f"SCHEMA_VERSION in segue/_retrieval/index_ddl.py and pin that digest under it here"
    )


def test_the_schema_id_names_only_the_version() -> None:
    """Nothing else (not the source files) goes into it: an upgrade that leaves the rows
    alone keeps existing indexes."""
    assert schema_id() == f"segue-history-index/{SCHEMA_VERSION}"
