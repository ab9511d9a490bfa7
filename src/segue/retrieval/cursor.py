"""Authenticated cursors (R26).

Format: ``<process id>.<payload>.<tag>``, all base64url without padding.

* ``process id`` — 8 random bytes drawn once per process. It is not a secret; it only lets a
  cursor from an earlier process be told apart from a forged one.
* ``payload`` — compact JSON of :class:`CursorState` (format ``v: 1``), written like a result
  (:func:`segue.retrieval.envelope.serialize`): ids copied from the files may hold a lone
  surrogate, which UTF-8 cannot carry, so it travels as its ``\\uXXXX`` escape.
* ``tag`` — HMAC-SHA256 over ``b"segue-cursor-1." + process id + "." + payload`` with a 32-byte
  key drawn from ``os.urandom`` once per process and never stored or printed.

Decoding answers, in order: ``invalid_cursor`` when the shape or base64 is wrong;
``stale_cursor`` when the tag does not verify *and* the process id is not ours (a cursor from
before a restart: it expired, nobody forged it); ``invalid_cursor`` when the tag does not
verify under our process id (tampered) or the payload is not a state. Binding checks
(workspace, action, query/window/item) are the caller's and also answer ``invalid_cursor``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
from typing import Any

import msgspec

from segue.history.receipt import FileStamp
from segue.retrieval.envelope import serialize
from segue.retrieval.snapshot import Snapshot

_KEY = os.urandom(32)
_PROCESS = base64.urlsafe_b64encode(os.urandom(8)).rstrip(b"=").decode("ascii")
_DOMAIN = b"segue-cursor-1."
MAX_CURSOR = 4096  # characters; a longer argument is not one of ours


class CursorError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class CursorState(msgspec.Struct, frozen=True, kw_only=True):
    v: int = 1
    ws: str  # workspace id
    act: str  # action
    bind: str  # digest of the query / window id / item id
    trusted: bool
    ep: str
    chat: tuple[int, int, int, int, int] | None  # stamp as of the last page
    arc: tuple[int, int, int, int, int] | None
    asz: int  # readable archive bytes (see snapshot.py)
    csz: int  # readable chat bytes as of the last page
    ce: int  # chat bytes (local offset) already checked for a new floor
    cs: int | None = None  # checking crossed an oversized line starting here
    cm: bool = False  # ... and saw the reset key in it so far
    phase: str  # "back" (newest first), "fwd" (list_items pages), "item" (read_item pages)
    pos: int  # global position (see reader.py)
    skip: int | None = None  # oversized line being crossed (end for back, start for fwd)
    skip_marker: bool = False
    # list_windows: the window being accumulated, newest-first scan
    first: str | None = None
    last: str | None = None
    count: int = 0
    # read_item: the located line and where the next page starts
    end: int = 0
    window: str | None = None
    offset: int = 0
    # read_item, phase "itemwin": the located line's start while its window is looked up
    at: int = 0


def binding(action: str, key: str) -> str:
    return hashlib.sha256(f"{action}\0{key}".encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _tag(process: str, payload: str) -> bytes:
    msg = _DOMAIN + process.encode("ascii") + b"." + payload.encode("ascii")
    return hmac.new(_KEY, msg, hashlib.sha256).digest()


def encode(state: CursorState) -> str:
    payload = _b64(serialize(msgspec.to_builtins(state)))
    return f"{_PROCESS}.{payload}.{_b64(_tag(_PROCESS, payload))}"


def decode(cursor: str) -> CursorState:
    parts = cursor.split(".") if len(cursor) <= MAX_CURSOR and cursor.isascii() else []
    if len(parts) != 3:
        raise CursorError("invalid_cursor", "cursor is malformed")
    process, payload, tag = parts
    try:
        tag_bytes = _unb64(tag)
        raw = _unb64(payload)
        _unb64(process)
    except ValueError:
        raise CursorError("invalid_cursor", "cursor is malformed") from None
    if not hmac.compare_digest(tag_bytes, _tag(process, payload)):
        if process != _PROCESS:
            raise CursorError(
                "stale_cursor", "cursor was issued by an earlier process; start a new query"
            )
        raise CursorError("invalid_cursor", "cursor failed authentication")
    try:
        # the stdlib parser, because msgspec refuses the lone-surrogate escapes ids may hold
        return msgspec.convert(json.loads(raw.decode("utf-8")), type=CursorState)
    except (ValueError, msgspec.ValidationError):
        raise CursorError("invalid_cursor", "cursor payload is not valid") from None


def stamp_tuple(s: FileStamp | None) -> tuple[int, int, int, int, int] | None:
    return None if s is None else (s.dev, s.ino, s.size, s.mtime_ns, s.ctime_ns)


def stamp_of(t: tuple[int, int, int, int, int] | None) -> FileStamp | None:
    return None if t is None else FileStamp(*t)


def snapshot_of(state: CursorState) -> Snapshot:
    return Snapshot(
        state.trusted, state.ep, stamp_of(state.chat), stamp_of(state.arc), state.asz, state.csz
    )


def with_snapshot(snap: Snapshot) -> dict[str, Any]:
    """The snapshot fields of a state, for ``msgspec.structs.replace``."""
    return {
        "trusted": snap.trusted,
        "ep": snap.epoch,
        "chat": stamp_tuple(snap.chat),
        "arc": stamp_tuple(snap.archive),
        "asz": snap.archive_size,
        "csz": snap.chat_size,
    }
