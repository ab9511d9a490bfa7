"""A strict fake HTTP server for the SDK clients: recorded responses through an httpx
``MockTransport`` (the SDKs' own transport seam), so the real SDK parses real wire bytes.

Each request takes the next canned response; a request with none left fails the test, and
:meth:`Replay.assert_done` fails when some were never asked for.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2

FIXTURES = Path(__file__).parent / "fixtures"


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def sse(name: str) -> httpx2.Response:
    """A streamed 200 with the recorded event-stream body."""
    return httpx2.Response(200, headers={"content-type": "text/event-stream"},
                           content=fixture(name))


def error(status: int, name: str, headers: dict[str, str] | None = None) -> httpx2.Response:
    return httpx2.Response(status, headers={"content-type": "application/json", **(headers or {})},
                           content=fixture(name))


class Replay:
    def __init__(self, *responses: httpx2.Response) -> None:
        self._responses = list(responses)
        self.requests: list[httpx2.Request] = []

    def _handle(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        if not self._responses:
            raise AssertionError(f"unexpected request {request.method} {request.url}")
        return self._responses.pop(0)

    def client(self) -> httpx2.Client:
        return httpx2.Client(transport=httpx2.MockTransport(self._handle))

    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(r.content) for r in self.requests]

    def assert_done(self) -> None:
        assert not self._responses, f"{len(self._responses)} response(s) never requested"


def no_wait(seconds: float) -> None:
    """A retry sleep that returns at once (tests never really wait)."""
