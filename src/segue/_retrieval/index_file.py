"""The history index file, ``history-index.sqlite`` (SPEC.md §7, R35): schema, opening, trust.

The transcript is the only truth; this file is a cache of it, and a wrong cache must never
make an answer wrong. So the file is *trusted* only when every one of these holds, checked
on every use (:func:`trusted_meta`):

* it opens as SQLite and its own header says it is as long as it is (a truncated copy is not);
* its schema id names :data:`SCHEMA_VERSION` (an index whose rows another version of segue
  derived differently is another version; a release that leaves rows alone keeps it);
* it names this workspace (an index copied from elsewhere is foreign) and it was completed;
* the transcript's receipt is stable and vouches for both files now (a trusted snapshot), the
  receipt epoch is the one the index was built against, the archive stamp is identical, and
  ``chat.jsonl`` is the same file (device, inode) and at least as long as the bytes indexed.

Then everything the index knows is a prefix of the transcript as it is, by R29: within one
epoch the files only grow by verified appends. Anything else (a rotation, a rewrite, a
recovery, an untracked change) gets a new epoch or breaks the receipt, and the index stops
being trusted. Row text is still re-read and digest-checked before it is returned.

Files: the index is written in SQLite's rollback-journal mode (never WAL, whose ``-wal`` and
``-shm`` files a mere reader would create), so a ``kill -9`` during a catch-up leaves a hot
journal that the next writer rolls back, and a read-only opener (``mode=ro``) refuses it
(untrusted: the call scans). A rebuild writes ``history-index.sqlite.build`` under an
``flock`` and renames it into place, so a crashed build never replaces a good index and a
process holding the old file locked keeps its own copy.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from segue._retrieval.index_ddl import DDL as DDL  # noqa: PLC0414 (re-exported)
from segue._retrieval.index_ddl import SCHEMA_VERSION as SCHEMA_VERSION  # noqa: PLC0414
from segue._retrieval.snapshot import Snapshot
from segue._workspace import Layout

INDEX_NAME = "history-index.sqlite"
FORMAT = "segue-history-index"
KIND_ITEM, KIND_BOUNDARY, KIND_FLOOR, KIND_SKIP = 0, 1, 2, 3
#: people's view of a row (``segue history``): hidden, the same text as the agent's, its own
VIEW_HIDDEN, VIEW_SAME, VIEW_OWN = 0, 1, 2
ROOT_POS = -1  # ``win`` of rows in the root window
TOOL_SEP = "\x1f"



def schema_id() -> str:
    """What an index file must say it is to be read (``meta.schema``)."""
    return f"{FORMAT}/{SCHEMA_VERSION}"


def index_path(layout: Layout) -> Path:
    return layout.index_dir / INDEX_NAME


def build_path(layout: Layout) -> Path:
    return layout.index_dir / (INDEX_NAME + ".build")


@dataclass(frozen=True)
class PrivateIndex(Layout):
    """A workspace whose history index lives in a folder of this process's own: a reader
    that writes nothing in the workspace still answers from an index it built itself."""

    private: Path = Path()

    @property
    def index_dir(self) -> Path:
        return self.private


def id_bytes(ident: str) -> bytes:
    """Ids go into the index as bytes: a transcript written by a JavaScript writer may hold a
    lone surrogate, which SQLite text cannot carry; ``surrogatepass`` keeps it, reversibly."""
    return ident.encode("utf-8", "surrogatepass")


def id_str(data: bytes) -> str:
    return bytes(data).decode("utf-8", "surrogatepass")


def storable(text: str) -> tuple[str, bool]:
    """Text as SQLite can hold it, and whether it had to change (a lone surrogate becomes
    U+FFFD). Rows whose text changed are always search candidates and are matched on the
    text re-read from the transcript, never on this copy."""
    if text.isascii():  # a flag CPython keeps: no lone surrogate, no copy
        return text, False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace"), True
    return text, False


def digest(raw: bytes) -> bytes:
    return hashlib.blake2b(raw, digest_size=16).digest()


@dataclass(frozen=True)
class Meta:
    """What an index file says about itself (the ``meta`` table)."""

    schema: str
    workspace: str
    epoch: str
    archive: list[int] | None  # the archive stamp (dev, ino, size, mtime ns, ctime ns)
    chat_file: list[int] | None  # (dev, ino) of chat.jsonl, None when it did not exist
    archive_size: int
    chat_read: int  # chat bytes indexed (a line start)
    win: int  # the window open at ``chat_read``: its boundary's pos ...
    wid: str  # ... and id
    hwin: str  # people's window open at ``chat_read``
    # (ids in the meta table are stored with ``ascii`` escapes, see to_rows)
    complete: bool

    def to_rows(self) -> list[tuple[str, str]]:
        return [
            ("schema", self.schema),
            ("workspace", self.workspace),
            ("epoch", self.epoch),
            ("archive", json.dumps(self.archive)),
            ("chat_file", json.dumps(self.chat_file)),
            ("archive_size", str(self.archive_size)),
            ("chat_read", str(self.chat_read)),
            ("win", str(self.win)),
            ("wid", json.dumps(self.wid)),
            ("hwin", json.dumps(self.hwin)),
            ("complete", "1" if self.complete else "0"),
        ]


class IndexUnusable(Exception):
    """The index cannot be trusted for this call (the reason is the message)."""


class IndexBehind(IndexUnusable):
    """The index is sound but has not caught up with a large append yet: this call scans,
    the next goes on catching up (no rebuild)."""


def read_meta(conn: sqlite3.Connection) -> Meta:
    try:
        values = dict(conn.execute("SELECT k, v FROM meta").fetchall())
        return Meta(
            schema=values["schema"],
            workspace=values["workspace"],
            epoch=values["epoch"],
            archive=json.loads(values["archive"]),
            chat_file=json.loads(values["chat_file"]),
            archive_size=int(values["archive_size"]),
            chat_read=int(values["chat_read"]),
            win=int(values["win"]),
            wid=json.loads(values["wid"]),
            hwin=json.loads(values["hwin"]),
            complete=values["complete"] == "1",
        )
    except (KeyError, ValueError, TypeError) as exc:
        raise IndexUnusable(f"index metadata unreadable: {exc}") from None


def write_meta(conn: sqlite3.Connection, meta: Meta) -> None:
    conn.executemany("INSERT OR REPLACE INTO meta (k, v) VALUES (?, ?)", meta.to_rows())


def _whole(path: Path) -> None:
    """SQLite's header records the database size in pages; a shorter file was cut."""
    with open(path, "rb") as f:
        header = f.read(100)
        size = os.fstat(f.fileno()).st_size
    if len(header) < 100 or not header.startswith(b"SQLite format 3\x00"):
        raise IndexUnusable("not an SQLite file")
    page = int.from_bytes(header[16:18], "big")
    page = 65536 if page == 1 else page
    pages = int.from_bytes(header[28:32], "big")
    if pages == 0 or pages * page != size:
        raise IndexUnusable("index file is truncated or was not closed cleanly")


def open_index(layout: Layout, *, write: bool) -> sqlite3.Connection:
    """Open the existing index (never creates one). ``write=False`` opens read-only: nothing
    is created or changed on disk, not even a journal."""
    path = index_path(layout)
    if not path.is_file():
        raise IndexUnusable("no index")
    try:
        _whole(path)
    except OSError as exc:
        raise IndexUnusable(f"index unreadable: {exc.strerror}") from None
    uri = f"file:{quote(str(path))}?mode={'rw' if write else 'ro'}"
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=0, isolation_level=None)
    except sqlite3.Error as exc:
        raise IndexUnusable(f"index does not open: {exc}") from None
    try:
        conn.execute("PRAGMA journal_mode=DELETE" if write else "PRAGMA query_only=1")
    except sqlite3.Error as exc:
        conn.close()
        raise IndexUnusable(f"index does not open: {exc}") from None
    return conn


def stamp_list(stamp: object) -> list[int] | None:
    if stamp is None:
        return None
    return [stamp.dev, stamp.ino, stamp.size, stamp.mtime_ns, stamp.ctime_ns]  # type: ignore[attr-defined]


def check_meta(meta: Meta, layout: Layout, snap: Snapshot) -> None:
    """Raise :class:`IndexUnusable` unless the index describes a prefix of the transcript as
    the (trusted) snapshot shows it (see the module docstring)."""
    if meta.schema != schema_id():
        raise IndexUnusable("index of another schema version")
    if meta.workspace != layout.workspace_id:
        raise IndexUnusable("index of another workspace")
    if not meta.complete:
        raise IndexUnusable("index build did not complete")
    if not snap.trusted:
        raise IndexUnusable("the receipt does not vouch for the files")
    if meta.epoch != snap.epoch:
        raise IndexUnusable("the transcript was rewritten since the index was built")
    # All but the ctime, which a mode change alone moves (the receipt, republished in the same
    # epoch after segue tightens a wide file, R38, already vouches for the files as they are).
    if (meta.archive or [])[:4] != (stamp_list(snap.archive) or [])[:4] or (
        meta.archive is None
    ) != (snap.archive is None) or meta.archive_size != snap.archive_size:
        raise IndexUnusable("the archive changed since the index was built")
    chat = snap.chat
    if meta.chat_file is not None:
        if chat is None or meta.chat_file != [chat.dev, chat.ino]:
            raise IndexUnusable("chat.jsonl was replaced since the index was built")
    elif meta.chat_read != 0:
        raise IndexUnusable("index metadata is inconsistent")
    if meta.chat_read > snap.chat_size:
        raise IndexUnusable("chat.jsonl is shorter than the index says")


def trusted_meta(conn: sqlite3.Connection, layout: Layout, snap: Snapshot) -> Meta:
    try:
        meta = read_meta(conn)
    except sqlite3.Error as exc:
        raise IndexUnusable(f"index unreadable: {exc}") from None
    check_meta(meta, layout, snap)
    return meta


def floor_pos(conn: sqlite3.Connection) -> int:
    """Position of the newest floor candidate the index knows, or ROOT_POS."""
    row = conn.execute("SELECT max(pos) FROM rows WHERE kind = ?", (KIND_FLOOR,)).fetchone()
    return int(row[0]) if row and row[0] is not None else ROOT_POS


def stream_in_progress(layout: Layout) -> bool:
    """A Xum stream may be in progress: ``partial.json`` is newer than the transcript. segue
    never writes into such a session directory (SPEC.md §3 "Homes")."""
    try:
        partial = os.stat(layout.session_dir / "partial.json").st_mtime_ns
    except OSError:
        return False
    newest = 0
    for path in (layout.chat, layout.archive):
        with contextlib.suppress(OSError):
            newest = max(newest, os.stat(path).st_mtime_ns)
    return partial > newest
