"""Real provider traffic (tests/providers/data, see its README for each file's source and
licence) turned into ``httpx`` responses for :class:`tests.providers.replay.Replay`.

Formats: vcrpy cassettes (``*.yaml``: ``body.string``, possibly gzip as ``!!binary``, or
pydantic-ai's ``parsed_body``), raw event streams (``*.sse``, header lines are SSE comments)
(whose final blank line, missing from the SDKs' fixture files, is restored) and chunk files
(``*.chunks.txt``: one chunk JSON a line, ``#`` header lines; each line is
framed as ``data: …`` and ``data: [DONE]`` closes the stream, as the servers send it).

Bodies are handed over decoded (gzip undone, ``content-encoding`` dropped) so that
:func:`pieces` can cut the same bytes into any size of network reads.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import yaml

DATA = Path(__file__).parent / "data"


@dataclass(frozen=True)
class Recorded:
    status: int
    headers: dict[str, str]
    body: bytes

    def response(self, piece: int | None = None) -> httpx2.Response:
        """The response; with ``piece``, its body arrives in reads of that many bytes."""
        if piece is None:
            return httpx2.Response(self.status, headers=self.headers, content=self.body)
        return httpx2.Response(self.status, headers=self.headers,
                               content=pieces(self.body, piece))


def pieces(body: bytes, size: int) -> Iterator[bytes]:
    for start in range(0, len(body), size):
        yield body[start:start + size]


def interactions(name: str) -> list[Recorded]:
    """Every recorded response of ``name``, in order."""
    path = DATA / name
    if name.endswith(".sse"):
        body = path.read_bytes()
        # The SDKs' fixture files stop after the last event's data line; on the wire a blank
        # line closes every event, the last one too (without it the event is never seen).
        return [_stream(body if body.endswith(b"\n\n") else body.rstrip(b"\n") + b"\n\n")]
    if name.endswith(".chunks.txt"):
        lines = [ln for ln in path.read_text("utf-8").splitlines()
                 if ln.strip() and not ln.startswith("#")]
        framed = "".join(f"data: {ln}\n\n" for ln in lines) + "data: [DONE]\n\n"
        return [_stream(framed.encode("utf-8"))]
    cassette = yaml.safe_load(path.read_text("utf-8"))
    return [_cassette(i["response"]) for i in cassette["interactions"]]


def recorded(name: str, index: int = 0) -> Recorded:
    return interactions(name)[index]


def issue_errors() -> dict[str, dict[str, Any]]:
    """The error replies quoted in public issues (``errors__issue_reports.yaml``)."""
    loaded: dict[str, dict[str, Any]] = yaml.safe_load(
        (DATA / "errors__issue_reports.yaml").read_text("utf-8"))
    return loaded


def issue_error(key: str) -> Recorded:
    entry = issue_errors()[key]
    body = entry["body"]
    text = body if isinstance(body, str) else json.dumps(body)
    headers = {str(k): str(v) for k, v in (entry.get("headers") or {}).items()}
    return Recorded(int(entry["status"]), headers, text.encode("utf-8"))


def _stream(body: bytes) -> Recorded:
    return Recorded(200, {"content-type": "text/event-stream"}, body)


def _cassette(response: dict[str, Any]) -> Recorded:
    headers: dict[str, str] = {}
    for key, value in (response.get("headers") or {}).items():
        low = key.lower()
        if low in ("content-encoding", "content-length", "transfer-encoding"):
            continue
        headers[low] = value[0] if isinstance(value, list) else str(value)
    if "parsed_body" in response:
        body = json.dumps(response["parsed_body"]).encode("utf-8")
    else:
        raw: bytes | str = response["body"]["string"]
        body = raw if isinstance(raw, bytes) else raw.encode("utf-8")
        if body[:2] == b"\x1f\x8b":
            body = gzip.decompress(body)
    return Recorded(int(response["status"]["code"]), headers, body)
