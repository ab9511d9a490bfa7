"""A local OpenAI-compatible server whose replies stream slowly and then stall.

:class:`SlowServer` answers ``POST …/chat/completions`` with a server-sent-event stream: the
words of its reply one chunk at a time, then, if ``stall`` is set (the default), it stops
sending and holds the connection open until the test ends (:meth:`close`), or for
:data:`STALL_SECONDS`. A client can only
get out of such a reply by stopping it, which is what the stop tests need: a run that waits
for the reply's end never ends, whatever the machine's speed. ``tool_call`` sends a tool
call's name and a first fragment of its arguments before the stall (a call that never
finishes streaming).

Everything it was asked is kept in :attr:`requests` (the decoded JSON bodies).

The server listens on 127.0.0.1 on a free port; in-process clients need
:func:`loopback_allowed`, since the suite blocks network connections.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

#: How long a stalled reply holds still before it ends after all.
STALL_SECONDS = 20.0


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    body = {"id": "chatcmpl-slow", "object": "chat.completion.chunk", "created": 0,
            "model": "slow", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return b"data: " + json.dumps(body).encode() + b"\n\n"


class SlowServer:
    def __init__(self, words: list[str], *, interval: float = 0.05, stall: bool = True,
                 tool_call: str | None = None) -> None:
        self.words = words
        self.interval = interval
        self.stall = stall
        self.tool_call = tool_call
        self.requests: list[dict[str, Any]] = []
        #: set when a reply has sent all it will send before stalling
        self.stalled = threading.Event()
        self._release = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                server.requests.append(json.loads(self.rfile.read(length)))
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                with contextlib.suppress(OSError):
                    server._stream(self.wfile)

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._http.daemon_threads = True
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        host, port = self._http.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def _stream(self, out: Any) -> None:
        for n, word in enumerate(self.words):
            out.write(_chunk({"role": "assistant", "content": word + " "} if n == 0
                             else {"content": word + " "}))
            out.flush()
            if self._release.wait(self.interval):
                return
        if self.tool_call is not None:
            out.write(_chunk({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                              "function": {"name": self.tool_call,
                                                           "arguments": '{"command": "tou'}}]}))
            out.flush()
        if self.stall:
            self.stalled.set()
            # Bounded, so that a client that cannot stop fails its test instead of hanging it.
            if self._release.wait(STALL_SECONDS):
                return
        out.write(_chunk({}, "stop"))
        out.write(b"data: [DONE]\n\n")
        out.flush()

    def close(self) -> None:
        self._release.set()
        self._http.shutdown()
        self._http.server_close()


@contextlib.contextmanager
def loopback_allowed() -> Iterator[None]:
    """Let this process connect to 127.0.0.1 while the block of tests/conftest.py is on."""
    blocked = socket.socket.connect
    from tests import conftest

    socket.socket.connect = conftest._real_connect  # type: ignore[method-assign]
    try:
        yield
    finally:
        socket.socket.connect = blocked  # type: ignore[method-assign]


@contextlib.contextmanager
def serving(words: list[str]) -> Iterator[SlowServer]:
    """A :class:`SlowServer` streaming ``words`` that this process may reach, closed after."""
    srv = SlowServer(words)
    try:
        with loopback_allowed():
            yield srv
    finally:
        srv.close()
