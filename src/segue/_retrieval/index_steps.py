"""Rebuilding the history index a bounded step at a time (SPEC.md §7). I/O.

When the index cannot be trusted (missing, damaged, foreign, of another schema version, or
mismatching the transcript), the look-back that found out answers from the bounded scan;
then, after the store lock is released, it runs one :func:`build_step`: more of the
transcript goes into the side file ``history-index.sqlite.build``, at most
:data:`STEP_BYTES`, and no longer than the call's time allows (``deadline``: SPEC.md §6, no
look-back call over 1 s; the step stops at the first line after it, checked every
:data:`_CHECK_LINES` lines once it has indexed :data:`MIN_STEP_BYTES`). Every later call that still
finds no trusted index runs the next step; the step that reaches the end renames the side
file into place. A 1 GB transcript so costs each call under a second of indexing, never the
minutes of a whole rebuild.

Why steps in the calls rather than a background thread: a step is one SQLite transaction in
rollback-journal mode under an ``flock`` of the side file, so it is safe whatever happens
around it. ``kill -9`` mid-step leaves a hot journal that the next step's connection rolls
back (the steps before it stay); two processes never step at once (the second skips); and it
works the same in a one-shot ``segue`` command, which a thread would not outlive, and in
long sessions, without a thread competing with the session for the interpreter.

The steps insert each line's ``rows``, ``lit`` and ``words``; once every line is in, they
fill the literal search's token vocabulary (``lex`` and ``lexgrams``) from SQLite's own
vocabulary of ``lit`` in term order, :data:`LEX_CHUNK` terms per statement and within the
same deadline, as a whole rebuild does once at its end, instead of batch by batch from
Python (which cost a step about a third of its time). The meta key ``steps_lex`` holds the
last term put in, so a late or killed step goes on from there.

A step trusts the side file only as the continuation of *this* transcript: the same schema
version and workspace, the receipt epoch, archive stamp and ``chat.jsonl`` it started
against (checked as :func:`~segue._retrieval.index_file.check_meta` checks the index), and the
``steps`` mark that only this module writes. Anything else (another epoch, a rotation, a
file :func:`~segue._retrieval.index_build.rebuild` left behind when it was killed, garbage)
and it starts afresh. A side file whose last step committed but was not renamed in (its
process died in between) is renamed in by the next step as it is, when it is still an index
of this transcript. A step reads without the store lock, as a rebuild does, and commits
only if the receipt still vouches for the same files afterwards (within an epoch the files
only grow, R29); the last step renames the file in only then.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sqlite3
import time
from collections.abc import Callable
from urllib.parse import quote

from segue._context.boundaries import ROOT_WINDOW_ID
from segue._fsutil import fsync_dir
from segue._retrieval.index_build import (
    _BATCH,
    Batch,
    NotBuilt,
    Record,
    StepLines,
    Walker,
    _same_files,
    claim_side_file,
    insert_batch,
)
from segue._retrieval.index_ddl import LEX_MAX
from segue._retrieval.index_file import (
    DDL,
    ROOT_POS,
    IndexUnusable,
    Meta,
    _whole,
    build_path,
    check_meta,
    index_path,
    read_meta,
    schema_id,
    stamp_list,
    trusted_meta,
    write_meta,
)
from segue._retrieval.reader import HistoryMoved, Segment
from segue._retrieval.snapshot import Snapshot, take
from segue._workspace import Layout

#: transcript bytes one step indexes at most (a single longer line is read whole, 64 KiB at a
#: time); a step with a deadline (every look-back's) usually stops at the deadline first
STEP_BYTES = 64 << 20
#: lines between two looks at the clock, and the most a step indexes after its deadline
#: (on realistic agent rows, a few tens of milliseconds)
_CHECK_LINES = 16
#: bytes a step indexes whatever the clock says (~0.05-0.25 s on realistic rows): a step
#: always makes progress, and a history smaller than this is indexed in one step
MIN_STEP_BYTES = 256 << 10
_STEPS = "steps"  # meta key: "1" while a side file is being built by steps
_POS = "steps_pos"  # meta key: the global position indexed so far (a line start)
#: meta key, once every line is in: the vocabulary phase, and the last ``lit`` term whose
#: ``lex`` entry is in ("" before the first); gone when the vocabulary is whole
_LEX = "steps_lex"
#: ``lit`` terms one statement of the vocabulary phase puts in ``lex`` (a few ms each)
LEX_CHUNK = 4096
#: ``steps`` once the last step committed: a whole index, each step of it journaled and
#: durable (a side file :func:`~segue._retrieval.index_build.rebuild` left is neither)
_DONE = "done"


def build_step(
    layout: Layout,
    max_bytes: int | None = None,
    *,
    deadline: float | None = None,
    until: Callable[[], bool] | None = None,
) -> Meta | None:
    """Run one step of about ``max_bytes`` (:data:`STEP_BYTES`), stopped early at
    ``deadline`` (a :func:`time.monotonic` value; None: bytes alone bound it) or, looked at
    as often as the clock, once ``until()`` is true (index_builder.py's stop); returns the
    index's metadata when this step completed it and put it in place, None when more steps
    are needed. Raises :class:`~segue._retrieval.index_build.NotBuilt` when no step can run
    now."""
    max_bytes = STEP_BYTES if max_bytes is None else max_bytes
    fd, snap, path = claim_side_file(
        layout, untrusted="the receipt does not vouch for the transcript files"
    )
    try:
        try:
            meta = _committed(layout, snap, fd)
            if meta is None:
                meta = _run(layout, snap, fd, max_bytes, _Stop(deadline, until))
        except sqlite3.Error as exc:
            if "locked" not in str(exc):  # held by a foreign opener: try again next call
                _discard(layout)
            raise NotBuilt(f"the index could not be written: {exc}") from None
        if meta is None:
            return None
        if not _same_files(snap, take(layout)):
            _discard(layout)
            raise NotBuilt("the transcript was rewritten while it was indexed")
        os.replace(path, index_path(layout))
        fsync_dir(layout.index_dir)
        return meta
    finally:
        os.close(fd)  # after every SQLite connection to the file is closed (POSIX locks)


def _committed(layout: Layout, snap: Snapshot, fd: int) -> Meta | None:
    """The side file's metadata when it is a whole index of this transcript, committed but
    not put in place (its builder was killed or its parent exited between the last step's
    ``COMMIT`` and the rename): it is renamed in as it is, not built again. None otherwise."""
    path = build_path(layout)
    if os.fstat(fd).st_size == 0:
        return None
    with contextlib.suppress(IndexUnusable, OSError):
        _whole(path)  # also: no journal of a step cut short makes it shorter or longer
        if os.path.exists(f"{path}-journal"):
            return None  # a step that did not end: _open rolls it back
        conn = sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True, timeout=0)
        try:
            values = dict(conn.execute("SELECT k, v FROM meta").fetchall())
            if values.get(_STEPS) != _DONE or values.get("complete") != "1":
                return None  # a build in progress, or one rebuild() left (not journaled)
            return trusted_meta(conn, layout, snap)
        except sqlite3.Error:
            return None
        finally:
            conn.close()
    return None


def _discard(layout: Layout) -> None:
    for name in (build_path(layout), f"{build_path(layout)}-journal"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name)


@dataclasses.dataclass
class _Side:
    """The side file being built: its connection, its metadata, how far it has read."""

    conn: sqlite3.Connection
    meta: Meta
    pos: int
    #: None while lines are indexed; then the last ``lit`` term in ``lex`` ("" none yet)
    lex: str | None = None


@dataclasses.dataclass(frozen=True)
class _Stop:
    """When a step ends before its byte bound: a clock deadline, a predicate, or neither."""

    deadline: float | None = None
    until: Callable[[], bool] | None = None

    def timed(self) -> bool:
        return self.deadline is not None or self.until is not None

    def due(self) -> bool:
        if self.deadline is not None and time.monotonic() >= self.deadline:
            return True
        return self.until is not None and self.until()


def _run(layout: Layout, snap: Snapshot, fd: int, max_bytes: int, deadline: _Stop) -> Meta | None:
    side = _open(layout, snap, fd)
    try:
        return _step(side, layout, snap, max_bytes, deadline)
    finally:
        side.conn.close()


def _open(layout: Layout, snap: Snapshot, fd: int) -> _Side:
    """The side file as this transcript's build in progress, or a fresh one."""
    path = str(build_path(layout))
    if os.fstat(fd).st_size > 0:
        conn = sqlite3.connect(path, isolation_level=None, timeout=0)
        try:
            conn.execute("PRAGMA journal_mode=DELETE")  # rolls back a killed step's journal
            values = dict(conn.execute("SELECT k, v FROM meta").fetchall())
            if values.get(_STEPS) == "1":
                meta = read_meta(conn)
                pos = int(values[_POS])
                check_meta(dataclasses.replace(meta, complete=True), layout, snap)
                if meta.chat_read == max(0, pos - snap.archive_size):
                    return _Side(conn, meta, pos, values.get(_LEX))
        except (sqlite3.Error, IndexUnusable, KeyError, ValueError):
            pass
        conn.close()
    os.ftruncate(fd, 0)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path + "-journal")
    conn = sqlite3.connect(path, isolation_level=None, timeout=0)
    try:
        conn.execute("PRAGMA journal_mode=DELETE")
        conn.executescript(f"BEGIN;\n{DDL}\nCOMMIT;")
        meta = Meta(
            schema=schema_id(),
            workspace=layout.workspace_id,
            epoch=snap.epoch,
            archive=stamp_list(snap.archive),
            chat_file=[snap.chat.dev, snap.chat.ino] if snap.chat is not None else None,
            archive_size=snap.archive_size,
            chat_read=0,
            win=ROOT_POS,
            wid=ROOT_WINDOW_ID,
            hwin=ROOT_WINDOW_ID,
            complete=False,
        )
        conn.execute("BEGIN")
        write_meta(conn, meta)
        conn.executemany(
            "INSERT OR REPLACE INTO meta (k, v) VALUES (?, ?)", [(_STEPS, "1"), (_POS, "0")]
        )
        conn.execute("COMMIT")
    except BaseException:
        conn.close()
        raise
    return _Side(conn, meta, 0)


def _step(
    side: _Side, layout: Layout, snap: Snapshot, max_bytes: int, deadline: _Stop
) -> Meta | None:
    a = snap.archive_size
    segs = [Segment(layout.archive, 0, a), Segment(layout.chat, a, a + snap.chat_size)]
    walker = Walker(side.meta.win, side.meta.wid, side.meta.hwin)
    conn = side.conn
    conn.execute("BEGIN IMMEDIATE")
    try:
        lex = side.lex
        try:
            if lex is None:
                lines = StepLines(segs, side.pos, max_bytes)
                done, finished = _index(conn, lines, a, walker, deadline)
            else:
                done, finished = side.pos, True
        except (HistoryMoved, OSError):
            done, finished = -1, False  # read without the lock: the files moved under us
        if finished:  # every line is in: the vocabulary, as far as the step's time allows
            lex = _vocabulary(conn, "" if lex is None else lex, deadline, first=lex is not None)
        if done < 0 or not _same_files(snap, take(layout)):
            conn.execute("ROLLBACK")
            return _rewritten()
        finished = finished and lex is None
        new = dataclasses.replace(
            side.meta,
            chat_read=max(0, done - a),
            win=walker.win,
            wid=walker.wid,
            hwin=walker.hwin,
            chat_file=[snap.chat.dev, snap.chat.ino] if snap.chat is not None else None,
            complete=finished,
        )
        write_meta(conn, new)
        if finished:
            conn.execute("DELETE FROM meta WHERE k IN (?, ?)", (_POS, _LEX))
            conn.execute("UPDATE meta SET v = ? WHERE k = ?", (_DONE, _STEPS))
        else:
            conn.execute("UPDATE meta SET v = ? WHERE k = ?", (str(done), _POS))
            if lex is not None:
                conn.execute("INSERT OR REPLACE INTO meta (k, v) VALUES (?, ?)", (_LEX, lex))
        conn.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")
        raise
    return new if finished else None


def _rewritten() -> Meta | None:
    raise NotBuilt("the transcript was rewritten while it was indexed")


def _index(
    conn: sqlite3.Connection,
    lines: StepLines,
    chat_start: int,
    walker: Walker,
    deadline: _Stop | None = None,
) -> tuple[int, bool]:
    """Insert the step's lines; returns the position reached and whether that is the end
    (a torn chat tail stays out). With ``deadline``, the step ends at the first look at the
    clock past it (every :data:`_CHECK_LINES` lines after the first :data:`MIN_STEP_BYTES`,
    each look after the lines are inserted, so their cost is counted)."""
    done = lines.pos
    batch: list[Record] = []
    timed = deadline is not None and deadline.timed()
    size = _CHECK_LINES if timed else _BATCH
    for line in lines:
        if not line.complete and line.start >= chat_start:
            _flush(conn, batch)
            return done, True
        batch.append(walker.record(line))
        done = line.end
        if len(batch) >= size:
            _flush(conn, batch)
            batch = []
            late = deadline is not None and timed and deadline.due()
            if late and done - lines.pos >= MIN_STEP_BYTES:
                return done, False
    _flush(conn, batch)
    return done, not lines.more


def _flush(conn: sqlite3.Connection, batch: list[Record]) -> None:
    if batch:
        insert_batch(conn, Batch.of(batch))


def _vocabulary(
    conn: sqlite3.Connection, after: str, deadline: _Stop, *, first: bool
) -> str | None:
    """Put ``lit``'s terms after ``after`` (in the table's own order) into ``lex`` and
    ``lexgrams``, :data:`LEX_CHUNK` at a time, until they are all in (None) or the step's
    time is up (the last term put in). As a whole rebuild does (index_build._lexicon), once,
    from SQLite's own vocabulary of ``lit``, instead of each batch's tokens from Python; a
    side file a step before this one began with those batches' terms in ``lex`` only skips
    them. ``first``: this step began here, so it does one chunk whatever the clock says."""
    conn.execute("CREATE VIRTUAL TABLE temp.lit_terms USING fts5vocab(main, lit, row)")
    try:
        while first or not deadline.due():
            first = False
            terms = [t for (t,) in conn.execute(
                "SELECT term FROM temp.lit_terms WHERE term > ? ORDER BY term LIMIT ?",
                (after, LEX_CHUNK),
            )]  # fmt: skip
            (top,) = conn.execute("SELECT coalesce(max(id), 0) FROM lex").fetchone()
            conn.executemany(
                "INSERT OR IGNORE INTO lex (term) VALUES (?)",
                [(t,) for t in terms if len(t) <= LEX_MAX],
            )
            conn.execute(
                "INSERT INTO lexgrams (rowid, term) SELECT id, term FROM lex WHERE id > ?",
                (top,),
            )
            if len(terms) < LEX_CHUNK:
                return None
            after = terms[-1]
        return after
    finally:
        conn.execute("DROP TABLE temp.lit_terms")
