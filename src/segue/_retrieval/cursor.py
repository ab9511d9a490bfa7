"""Authenticated cursors (R26), at most 256 characters (SPEC.md §4).

Format: ``<process id>.<handle>.<tag>``, all base64url without padding (11 + 16 + 22 = 51
characters, whatever the state).

* ``process id`` — 8 random bytes drawn once per process. It is not a secret; it only lets a
  cursor from an earlier process be told apart from a forged one.
* ``handle`` — 12 random bytes naming a :class:`CursorState` kept in this process (a bounded
  table, oldest evicted first). A cursor costs the model tokens on every call, so the state
  (stamps, positions, ids of up to 256 bytes) stays here and only its name travels. Cursors
  already live only as long as the process (the key below), so nothing is lost by that.
* ``tag`` — HMAC-SHA256 (first 16 bytes) over ``b"segue-cursor-2." + process id + "." +
  handle`` with a 32-byte key drawn from ``os.urandom`` once per process and never stored or
  printed.

Decoding answers, in order: ``invalid_cursor`` when the shape or base64 is wrong, or is not
the one canonical spelling (no ``=`` padding, the URL-safe alphabet, no stray trailing bits,
each part of its exact length);
``stale_cursor`` when the tag does not verify *and* the process id is not ours (a cursor from
before a restart: it expired, nobody forged it); ``invalid_cursor`` when the tag does not
verify under our process id (tampered); ``stale_cursor`` when the handle was evicted.
Binding checks (workspace, action, query/window/item) are the caller's and answer
``invalid_cursor``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import threading
from collections import OrderedDict
from typing import Any

import msgspec

from segue._history.receipt import FileStamp
from segue._retrieval.snapshot import Snapshot

_KEY = os.urandom(32)
_PROCESS = base64.urlsafe_b64encode(os.urandom(8)).rstrip(b"=").decode("ascii")
_DOMAIN = b"segue-cursor-2."
MAX_CURSOR = 256  # characters (SPEC.md §4); a longer argument is not one of ours
#: states kept per process; a model pages a handful of queries at a time, so 4096 live
#: cursors is generous, and each state is a few hundred bytes
MAX_LIVE = 4096
#: characters of held hits (a scan's ranked page keeps up to a couple of hundred snippets
#: for its next calls) all live states keep at most; the oldest states go first past it
MAX_HELD_CHARS = 16 << 20
_TAG_BYTES = 16
#: bytes of the process id, the handle and the tag
_LENGTHS = [8, 12, _TAG_BYTES]
_STATES: OrderedDict[str, CursorState] = OrderedDict()
_STATES_LOCK = threading.Lock()
_HELD: dict[str, int] = {}  # the held characters of each live state that holds any
_HELD_TOTAL = [0]  # their sum


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
    # index pages (phase "ix"): the window's boundary position for list_items
    win: int = 0
    # read_item (phase "iwin": still looking for the item's window): where the item starts
    item_at: int = 0
    # list_windows oldest first: the kind of the window being accumulated
    wkind: str | None = None
    # scan search: hits already found whose window is not known yet (never returned with a
    # null window id); kept here, not in the cursor string
    held: list[dict[str, Any]] = msgspec.field(default_factory=list)
    # ... and, when they filled the page, where to go on once they are returned (the rows
    # read after the last of them were only searched for a boundary)
    after: int | None = None
    # index pages (phase "ix"): the same place as a scan cursor, for a next call that cannot
    # use the index (behind, locked, damaged, rebuilt): a verified append expires neither
    scan: CursorState | None = None
    # index words search in rank order: the ranked positions as of the first page, and the
    # next of them to return (then the other hits newest first below ``pos``)
    ranked: tuple[int, ...] = ()
    rk: int = 0
    # relevance search: positions of items already returned out of position order (ranked
    # by the index) that lie below ``pos``; the scan and a re-ranking index skip them
    shown: tuple[int, ...] = ()
    # scan search newest first: the window (id, its boundary's start) the rows above ``kb``
    # belong to, learned by an earlier page, so hits there need not wait for the boundary
    kw: str | None = None
    kb: int = 0


def binding(action: str, key: str) -> str:
    return hashlib.sha256(f"{action}\0{key}".encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _tag(process: str, handle: str) -> bytes:
    msg = _DOMAIN + process.encode("ascii") + b"." + handle.encode("ascii")
    return hmac.new(_KEY, msg, hashlib.sha256).digest()[:_TAG_BYTES]


def _held_chars(state: CursorState) -> int:
    """What a state's held hits cost (their snippets, and a little for the rest of each)."""
    own = sum(64 + len(str(e.get("text", ""))) for e in state.held)
    return own + (_held_chars(state.scan) if state.scan is not None else 0)


def encode(state: CursorState) -> str:
    handle = _b64(os.urandom(12))
    cost = _held_chars(state)
    with _STATES_LOCK:
        _STATES[handle] = state
        if cost:
            _HELD[handle] = cost
            _HELD_TOTAL[0] += cost
        while len(_STATES) > MAX_LIVE or (_HELD_TOTAL[0] > MAX_HELD_CHARS and len(_STATES) > 1):
            old, _ = _STATES.popitem(last=False)
            _HELD_TOTAL[0] -= _HELD.pop(old, 0)
    return f"{_PROCESS}.{handle}.{_b64(_tag(_PROCESS, handle))}"


def decode(cursor: str) -> CursorState:
    parts = cursor.split(".") if len(cursor) <= MAX_CURSOR and cursor.isascii() else []
    if len(parts) != 3:
        raise CursorError("invalid_cursor", "cursor is malformed")
    process, handle, _ = parts
    try:
        decoded = [_unb64(part) for part in parts]
    except ValueError:
        raise CursorError("invalid_cursor", "cursor is malformed") from None
    # One spelling per cursor (issue 21): padding, another alphabet or stray bits that decode
    # to the same bytes are not the cursor that was issued.
    if [len(b) for b in decoded] != _LENGTHS or [_b64(b) for b in decoded] != parts:
        raise CursorError("invalid_cursor", "cursor is malformed")
    tag_bytes = decoded[2]
    if not hmac.compare_digest(tag_bytes, _tag(process, handle)):
        if process != _PROCESS:
            raise CursorError(
                "stale_cursor", "cursor was issued by an earlier process; start a new query"
            )
        raise CursorError("invalid_cursor", "cursor failed authentication")
    with _STATES_LOCK:
        state = _STATES.get(handle)
        if state is not None:
            _STATES.move_to_end(handle)
    if state is None:
        raise CursorError("stale_cursor", "cursor expired (too many newer ones); start again")
    return state


def request_state(
    cursor: str | None, *, workspace_id: str, action: str, bound: str
) -> CursorState | None:
    """The state a request's ``cursor`` carries (None without one), checked to belong to this
    workspace, action and query; CursorError otherwise. Both stores' tools take cursors so."""
    if cursor is None:
        return None
    state = decode(cursor)
    if state.ws != workspace_id:
        raise CursorError("invalid_cursor", "cursor belongs to another workspace")
    if state.act != action or state.bind != binding(action, bound):
        raise CursorError(
            "invalid_cursor", "cursor belongs to another action or query; start without it"
        )
    return state


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
