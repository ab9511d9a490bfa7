"""Issue case 8 (SPEC.md §9, R38): ``segue mcp serve`` answers every request that has an id,
valid or not, with a JSON-RPC error, and a garbage line with a parse error (id null), so no
client waits for ever; the real ``mcp`` client still works on the same server afterwards."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from queue import Empty, Queue
from typing import Any

import pytest

pytest.importorskip("mcp")

from tests.mcp.helpers import run_client, subprocess_env, write_history

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "raw", "version": "1"}}}
CALL = '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"session_history",' \
       '"arguments":%s}}'

CASES = [
    # (the line sent, the id expected back, the error code)
    (CALL % ("1", '{"action":"search","query":"\\ud800"}'), 1, -32602),
    ('{"jsonrpc":"1.0","id":2,"method":"tools/list"}', 2, -32600),
    ('{"jsonrpc":"2.0","id":3,"method":"tools/list","params":"x"}', 3, -32600),
    ('{"jsonrpc":"2.0","id":"four","method":"tools/call","params":[1]}', "four", -32600),
    ("this is not json", None, -32700),
    ('{"jsonrpc":"2.0","id":5,"method":', None, -32700),
    ("[1, 2]", None, -32600),
    ('{"id":6}', 6, -32600),
    ('{"jsonrpc":"2.0","id":7,"method":7}', 7, -32600),
    ('{"jsonrpc":"2.0","id":true,"method":"tools/list"}', None, -32600),
    (CALL % ("8", '"not an object"'), 8, -32602),
    ('{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"session_history",'
     '"arguments":{"action":"search","query":"\\udfff x"}}}', 9, -32602),
]


class Raw:
    def __init__(self, home: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "segue", "mcp", "serve", "-w", "demo"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env=subprocess_env(home),
        )
        self.lines: Queue[bytes] = Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode("utf-8", "surrogatepass") + b"\n")
        self.proc.stdin.flush()

    def answer(self) -> dict[str, Any]:
        try:
            return dict(json.loads(self.lines.get(timeout=30)))
        except Empty:
            raise AssertionError("the server never answered") from None

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
        self.reader.join(timeout=30)
        assert self.proc.stdout is not None
        self.proc.stdout.close()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    write_history(home, "demo", [f"note {i}" for i in range(4)], floor_after=None)
    return home


def test_every_request_with_an_id_and_every_garbage_line_is_answered(home: Path) -> None:
    raw = Raw(home)
    try:
        raw.send(json.dumps(INIT))
        assert raw.answer()["id"] == 0
        raw.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
        for line, ident, code in CASES:
            raw.send(line)
            answer = raw.answer()
            assert answer.get("jsonrpc") == "2.0", line
            assert answer["id"] == ident, line
            assert answer["error"]["code"] == code, (line, answer)
        # A bad notification is not answered (JSON-RPC), and the server still serves.
        raw.send('{"jsonrpc":"2.0","method":"notifications/x","params":{"a":"\\ud800"}}')
        raw.send(CALL % ("10", '{"action":"search","query":"note"}'))
        answer = raw.answer()
        assert answer["id"] == 10 and "result" in answer
        assert json.loads(answer["result"]["content"][0]["text"])["ok"] is True
    finally:
        raw.close()


def test_the_real_client_is_unaffected(home: Path) -> None:
    async def body(client: Any) -> Any:
        return await client.call_tool("session_history", {"action": "search", "query": "note"})

    result = run_client(home, ["mcp", "serve", "-w", "demo"], body)
    assert json.loads(result.content[0].text)["ok"] is True
