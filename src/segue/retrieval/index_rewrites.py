"""Re-deriving the rows a one-line rewrite changed, instead of rebuilding the index (SPEC.md §7
"Freshness": the quarantine of a failed send, R22). I/O; runs with the store lock held (the
caller's shared lock: no writer changes the files meanwhile).

A quarantine rewrites one line of ``chat.jsonl`` under the lock, which gives the transcript a
new epoch and so untrusts the index. The store records the rewrite
(:func:`segue.history.quarantine.record_rewrite`): the epoch before and after, the file's
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

Then every row from the first rewritten line on is removed (its words and trigram entries
with it, with the values they were inserted with) and the index's read position is put back
to that line, with the window open there; the catch-up that follows in the same call
(:func:`~segue.retrieval.index_build.catch_up`) re-derives those rows from the file, and its
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

from segue.context.boundaries import ROOT_WINDOW_ID
from segue.history.quarantine import LineRewrite, read_rewrites
from segue.retrieval.index_build import _body
from segue.retrieval.index_file import (
    KIND_ITEM,
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
from segue.retrieval.ranking import index_terms
from segue.retrieval.reader import read_span
from segue.retrieval.snapshot import Snapshot
from segue.workspace import Layout

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
    win, wid, hwin = _window_at(conn, cut)
    _forget(conn, cut)
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


def _forget(conn: sqlite3.Connection, cut: int) -> None:
    """Remove every row at or after ``cut`` and what :func:`index_build._insert` put in the
    full-text tables for it, with the values it inserted (contentless tables forget a row
    only so)."""
    tables = {
        str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    }
    rows = conn.execute(
        "SELECT pos, kind, text, vtext FROM rows WHERE pos >= ?", (cut,)
    ).fetchall()
    if "fts" in tables:
        conn.executemany(
            "INSERT INTO fts (fts, rowid, body) VALUES ('delete', ?, ?)",
            [(r[0], _body(r[2], r[3])) for r in rows if r[2] is not None or r[3] is not None],
        )
    if "words" in tables:
        conn.executemany(
            "INSERT INTO words (words, rowid, terms) VALUES ('delete', ?, ?)",
            [(r[0], index_terms(str(r[2]))) for r in rows if r[1] == KIND_ITEM],
        )
    conn.execute("DELETE FROM rows WHERE pos >= ?", (cut,))
