"""Re-deriving the rows a one-line rewrite changed, instead of rebuilding the index (SPEC.md §7
"Freshness": the quarantine of a failed send, R22). I/O; runs with the store lock held (the
caller's shared lock: no writer changes the files meanwhile).

A quarantine rewrites one line of ``chat.jsonl`` under the lock, which gives the transcript a
new epoch and so untrusts the index. The store records the rewrite
(:func:`segue._history.quarantine.record_rewrite`): the epoch before and after, the file's
device and inode before and after, the line's offset and its old and new lengths and
digests. :func:`rederive` makes the index an index of the rewritten file when every one of
these holds, and leaves it alone otherwise (then it is rebuilt, as before):

* the rewrites chain from the index's epoch to the receipt's (the snapshot is trusted: a
  stable receipt vouches for the files now), each rewriting ``chat.jsonl`` (a rewrite of the
  archive moves every later position: rebuilt), the first one the file the index read;
* where a rewritten line lies in what the index read, the index's row there has the old
  line's length and digest (the record names the bytes the index holds);
* the newest rewritten line is in the file now, with its new digest;
* at most :data:`REDERIVE_BYTES` of indexed rows lie at or after the first rewritten line.

Then every row from the first rewritten line on is removed, its full-text entries with it.
Those tables are contentless (SPEC.md §6: the index keeps no copy of the text), so an entry
goes only when given back the values it was inserted with: the bytes the index read are
rebuilt (the file now, each recorded rewrite undone with the original the quarantined row
holds) and every row's line must have the row's length and digest before anything is
removed and the index's read position is put back
to that line, with the window open there; the catch-up that follows in the same call
(:func:`~segue._retrieval.index_build.catch_up`) re-derives those rows from the file, and its
first check re-reads the newest row kept, byte for byte. Rows before the line are the file's
own bytes, copied verbatim by the rewrite, at unchanged positions. All in one SQLite
transaction: a ``kill -9`` leaves the index as it was (untrusted, then rebuilt or re-derived).
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import sqlite3
from typing import Literal

from segue._context.boundaries import ROOT_WINDOW_ID
from segue._errors import RowDecodeError
from segue._history.quarantine import LineRewrite, read_rewrites
from segue._messages import decode_row, encode_row, row_from_obj
from segue._retrieval.index_build import Walker
from segue._retrieval.index_file import (
    ROOT_POS,
    IndexUnusable,
    Meta,
    digest,
    id_str,
    open_index,
    read_meta,
    stamp_list,
    write_meta,
)
from segue._retrieval.reader import _line, read_span
from segue._retrieval.snapshot import Snapshot
from segue._workspace import Layout

#: indexed bytes at and after the rewritten line that may be re-derived (else: a rebuild)
REDERIVE_BYTES = 4 << 20

Outcome = Literal["rederived", "busy", "no"]


def rederive(layout: Layout, snap: Snapshot) -> Outcome:
    """Make the index an index of the files ``snap`` shows after recorded one-line rewrites
    (see the module): ``"rederived"``, ``"busy"`` (another connection holds the index: try
    again on the next call) or ``"no"`` (nothing recorded applies: rebuild)."""
    if not snap.trusted or snap.chat is None:
        return "no"
    notes = read_rewrites(layout)
    if not notes or notes[-1].after != snap.epoch:
        return "no"
    try:
        conn = open_index(layout, write=True)
    except IndexUnusable:
        return "no"
    try:
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error:
            return "busy"
        try:
            done = _apply(conn, layout, snap, notes)
            conn.execute("COMMIT" if done else "ROLLBACK")
        except sqlite3.OperationalError as exc:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            return "busy" if "locked" in str(exc) else "no"
        except (sqlite3.Error, IndexUnusable, OSError):
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            return "no"
        return "rederived" if done else "no"
    finally:
        conn.close()


def _chain(meta: Meta, notes: list[LineRewrite]) -> list[LineRewrite]:
    """The recorded rewrites from the index's epoch on ([] when none starts there)."""
    for i, note in enumerate(notes):
        if note.before == meta.epoch:
            chain = notes[i:]
            linked = all(a.after == b.before for a, b in itertools.pairwise(chain))
            return chain if linked else []
    return []


def _apply(
    conn: sqlite3.Connection, layout: Layout, snap: Snapshot, notes: list[LineRewrite]
) -> bool:
    meta = read_meta(conn)
    chain = _chain(meta, notes)
    if not chain or not meta.complete or meta.workspace != layout.workspace_id:
        return False
    a = meta.archive_size
    archive = stamp_list(snap.archive)
    # the archive as the index read it (a mode change alone moves its ctime, R38)
    if a != snap.archive_size or (meta.archive or [])[:4] != (archive or [])[:4]:
        return False
    cut = a + meta.chat_read  # the first position the index does not hold afterwards
    chat_file = meta.chat_file
    for note in chain:
        if note.source != "chat":
            return False
        if chat_file is not None and list(note.file_before) != chat_file:
            return False
        if chat_file is None and meta.chat_read != 0:
            return False
        at = a + note.offset
        if at < cut:
            row = conn.execute("SELECT len, digest FROM rows WHERE pos = ?", (at,)).fetchone()
            if row is None or row[1] is None or int(row[0]) != note.old_len:
                return False
            if bytes(row[1]).hex() != note.old_digest:
                return False
            cut = at
        chat_file = list(note.file_after)
    last, now = chain[-1], snap.chat
    if now is None or chat_file != [now.dev, now.ino] or snap.chat_size < last.size_after:
        return False
    line = read_span(layout.chat, last.offset, last.new_len)
    if line is None or not line.endswith(b"\n") or digest(line[:-1]).hex() != last.new_digest:
        return False
    if a + meta.chat_read - cut > REDERIVE_BYTES:
        return False
    old = _indexed_bytes(layout, snap, chain, cut - a, meta.chat_read)
    if old is None:
        return False
    win, wid, hwin = _window_at(conn, cut)
    if not _forget(conn, cut, old):
        return False
    write_meta(
        conn,
        dataclasses.replace(
            meta,
            epoch=snap.epoch,
            archive=archive,
            chat_file=chat_file,
            chat_read=cut - a,
            win=win,
            wid=wid,
            hwin=hwin,
        ),
    )
    return True


def _window_at(conn: sqlite3.Connection, pos: int) -> tuple[int, str, str]:
    """The walker's state just before ``pos``: each row holds it as of after that row."""
    row = conn.execute(
        "SELECT win, wid, hwin FROM rows WHERE pos < ? ORDER BY pos DESC LIMIT 1", (pos,)
    ).fetchone()
    if row is None:
        return ROOT_POS, ROOT_WINDOW_ID, ROOT_WINDOW_ID
    return int(row[0]), id_str(row[1]), id_str(row[2])


def old_line(new_raw: bytes) -> bytes | None:
    """The line a quarantine replaced, rebuilt from the quarantined row that holds the
    original inside it (R22), or None when ``new_raw`` is not such a row. Only a guess until
    its digest is checked against the index's: a row another writer spelled differently does
    not rebuild byte for byte (the index is then rebuilt)."""
    try:
        row = decode_row(new_raw)
    except (RowDecodeError, ValueError, TypeError):
        return None
    original = row.metadata.get("contextBudgetRejectedMessage")
    if not isinstance(original, dict):
        return None
    obj = dict(original)
    meta = obj.get("metadata")
    meta = dict(meta) if isinstance(meta, dict) else {}
    if "historySequence" in row.metadata:
        meta["historySequence"] = row.metadata["historySequence"]
    obj["metadata"] = meta
    if row.workspaceId is not None:
        obj["workspaceId"] = row.workspaceId
    try:
        return encode_row(row_from_obj(obj))
    except (RowDecodeError, ValueError, TypeError):
        return None


def _indexed_bytes(
    layout: Layout, snap: Snapshot, chain: list[LineRewrite], off0: int, end: int
) -> bytes | None:
    """``chat.jsonl`` from ``off0`` to ``end`` as the index read it: the file now with each
    recorded rewrite undone, newest first (each new line checked against its digest, each
    rebuilt old line against its own), or None when that cannot be shown."""
    size = snap.chat_size - off0
    if size < 0 or size > REDERIVE_BYTES + (1 << 20):
        return None
    buf = read_span(layout.chat, off0, size) if size else b""
    if buf is None:
        return None
    for note in reversed(chain):
        at = note.offset - off0
        if at < 0:
            return None
        new = buf[at : at + note.new_len]
        if len(new) != note.new_len or not new.endswith(b"\n"):
            return None
        if digest(new[:-1]).hex() != note.new_digest:
            return None
        old = old_line(new[:-1])
        if old is None or len(old) + 1 != note.old_len or digest(old).hex() != note.old_digest:
            return None
        buf = buf[:at] + old + b"\n" + buf[at + note.new_len :]
    if len(buf) < end - off0:
        return None
    return buf[: end - off0]


def _forget(conn: sqlite3.Connection, cut: int, old: bytes) -> bool:
    """Remove every row at or after ``cut`` and what :func:`index_build._insert` put in the
    full-text tables for it. The tables are contentless: a row's entries are removed only by
    giving back the very values inserted, so each row's line is taken from ``old`` (the file
    from ``cut`` on as the index read it) and must have the row's length and digest; False
    (nothing removed) when one does not."""
    rows = conn.execute(
        "SELECT pos, len, digest FROM rows WHERE pos >= ? ORDER BY pos", (cut,)
    ).fetchall()
    walker = Walker()
    lit: list[tuple[int, str]] = []
    words: list[tuple[int, str]] = []
    pwords: list[tuple[int, str]] = []
    for pos, length, want in rows:
        at = int(pos) - cut
        data = old[at : at + int(length)]
        if len(data) != int(length):
            return False
        own_nl = data.endswith(b"\n")
        line = _line(int(pos), int(pos) + int(length), data, own_nl)
        if want is not None and (line.raw is None or digest(line.raw) != bytes(want)):
            return False
        record = walker.record(line)
        if record.body is not None:
            lit.append((int(pos), record.body))
        if record.words is not None:
            words.append((int(pos), record.words))
        if record.pwords is not None:
            pwords.append((int(pos), record.pwords))
    conn.executemany("INSERT INTO lit (lit, rowid, body) VALUES ('delete', ?, ?)", lit)
    conn.executemany("INSERT INTO words (words, rowid, terms) VALUES ('delete', ?, ?)", words)
    conn.executemany(
        "INSERT INTO pwords (pwords, rowid, terms) VALUES ('delete', ?, ?)", pwords
    )
    conn.execute("DELETE FROM rows WHERE pos >= ?", (cut,))
    return True
