"""Building the history index and catching it up (SPEC.md §7). I/O.

Every line of the transcript becomes one ``rows`` record, classified by the same
:func:`segue._retrieval.project.classify` the bounded scan uses (so the projection, the hidden
rule and floor recognition of R11/R25 are the scan's, not a copy), and the people's view by
:mod:`segue._views.project`. Lines are read with the scan's own
:class:`~segue._retrieval.reader.ForwardReader`, so an oversized line is never held in memory
and a reset key past its first MiB still makes it a floor.

* :func:`rebuild` reads the files *without* the store lock (a long build must not stall
  writers) into ``history-index.sqlite.build`` and, only if the receipt then still vouches
  for the same epoch and archive, renames it into place. Whatever was appended meanwhile is
  caught up later; anything else that happened makes the new file untrusted, never wrong.
* :func:`catch_up` runs with the store lock held (the caller's): it reads only the chat bytes
  appended since the index's ``chat_read``, at most ``max_bytes`` per call, in one SQLite
  transaction (a ``kill -9`` rolls it back).
* A chat line without its newline is not indexed (it may be a batch in flight); the reader
  of the index checks those bytes itself.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from segue._context.boundaries import ROOT_WINDOW_ID, is_boundary, window_id_of_boundary
from segue._fsutil import fsync_dir
from segue._retrieval import index_build_worker
from segue._retrieval.filters import tool_names
from segue._retrieval.index_ddl import LEX_MAX
from segue._retrieval.index_file import (
    DDL,
    KIND_BOUNDARY,
    KIND_FLOOR,
    KIND_ITEM,
    KIND_SKIP,
    ROOT_POS,
    TOOL_SEP,
    VIEW_HIDDEN,
    VIEW_OWN,
    VIEW_SAME,
    IndexUnusable,
    Meta,
    build_path,
    digest,
    id_bytes,
    index_path,
    schema_id,
    stamp_list,
    storable,
    stream_in_progress,
    write_meta,
)
from segue._retrieval.index_words import (
    holds_long_token,
    line_tokens,
    lines,
    long_token_windows,
    people_terms,
    words_and_lines,
)
from segue._retrieval.no_gc import no_gc
from segue._retrieval.project import Kind, Seen, classify
from segue._retrieval.reader import (
    Budget,
    ForwardReader,
    FwdState,
    HistoryMoved,
    RawLine,
    Segment,
    read_span,
)
from segue._retrieval.snapshot import Snapshot, take
from segue._views.project import display
from segue._views.project import is_hidden as hidden_for_people
from segue._workspace import Layout

#: chat bytes one call may catch up; more waits for the next call (that call scans)
CATCH_UP_BYTES = 2 << 20  # per call (words analysis is the cost); the rest on the next
_BATCH = 1000  # rows (a few MB): a batch's texts are held until it is inserted
_TIMED_BATCH = 100  # rows between two looks at the clock of a catch-up with a deadline
_UNBOUNDED = 1 << 62
#: letters ``re.IGNORECASE`` folds onto ASCII from outside it (K, ſ, İ, ı)
_RISKY = re.compile("[\u212a\u017f\u0130\u0131]")
_KINDS = {
    Kind.ITEM: KIND_ITEM,
    Kind.BOUNDARY: KIND_BOUNDARY,
    Kind.FLOOR: KIND_FLOOR,
    Kind.SKIP: KIND_SKIP,
}
_INSERT = (
    "INSERT INTO rows (pos, len, digest, kind, win, wid, wkind, item, rid, role, tools, ts, "
    "vkind, hwin, risky, mach, plen) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
)
_COMPACTION = b'"compactionBoundary"'
#: a whole rebuild creates the ``rows`` indexes after its inserts (the same schema)
_INDEXES = re.findall(r"CREATE INDEX [^;]*;", DDL)
_TABLES = DDL
for _statement in _INDEXES:
    _TABLES = _TABLES.replace(_statement, "")
_RISKY_LONG = 3  # rows.risky: a token longer than LEX_MAX (index_ddl.py): its windows are in
# ``lit`` and ``lex`` (index_words.long_token_windows); a candidate for pieces too long for them

Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class Record:
    """What one line becomes: its ``rows`` values, its ``words`` text, its literal tokens
    (of the agent's and people's text) and its ``pwords`` text."""

    values: tuple[object, ...]
    words: str | None  # the ``words`` table's text (items only)
    pwords: str | None  # the ``pwords`` table's text (people's terms the ``words`` text lacks)
    body: str | None  # the ``lit`` table's text: the distinct lines of the agent's and
    # people's text
    pos: int  # the line's global start and end
    end: int


class NotBuilt(Exception):
    """The index was not (re)built; the message says why. Never an error for the user: the
    answer comes from the scan."""


@dataclass
class Walker:
    """Turns lines into records, oldest first, tracking the window open at each line."""

    win: int = ROOT_POS
    wid: str = ROOT_WINDOW_ID
    hwin: str = ROOT_WINDOW_ID

    def step(self, line: RawLine) -> tuple[Seen, str | None]:
        """Follow one line (the window it opens): what it is and its window's kind."""
        seen = classify(line)
        wkind = None
        if seen.kind in (Kind.BOUNDARY, Kind.FLOOR) and seen.window_id is not None:
            self.win, self.wid, wkind = line.start, seen.window_id, seen.window_kind
        if seen.row is not None and is_boundary(seen.row):
            self.hwin = window_id_of_boundary(seen.row)
        return seen, wkind

    def follow(self, line: RawLine) -> None:
        """:meth:`step` without the work where the bytes prove the line opens no window: a
        floor or a reset boundary mentions the reset key (``line.marker``), a compaction
        boundary holds ``"compactionBoundary"`` as written or with a ``\\u`` escape."""
        raw = line.raw
        if not line.marker and (
            raw is None or not line.complete or (_COMPACTION not in raw and b"\\u" not in raw)
        ):
            return  # classify() would make it an item or skip it: no window changes
        self.step(line)

    def record(self, line: RawLine) -> Record:
        seen, wkind = self.step(line)
        row = seen.row
        kind = _KINDS[seen.kind]
        item = seen.item
        text = item.text if item is not None else None
        vkind, vtext = VIEW_HIDDEN, None
        if row is not None and not hidden_for_people(row):
            shown = display(row).text
            vkind, vtext = (VIEW_SAME, None) if shown == text else (VIEW_OWN, shown)
        tools = None
        if row is not None:
            tools = storable(TOOL_SEP + TOOL_SEP.join(tool_names(row)) + TOOL_SEP)[0]
        risky = int(_risky(text) or _risky(vtext))
        if text is not None:
            text, changed = storable(text)
            risky = 2 if changed else risky
        if vtext is not None:
            vtext, changed = storable(vtext)
            risky = 2 if changed else risky
        words: str | None = None
        found: list[str] = []
        if text is not None and kind == KIND_ITEM:
            words, found = words_and_lines(text)
        seen_text = text if vkind == VIEW_SAME else vtext
        plen, pwords = (  # a text changed to be stored (risky 2) is analysed when read
            people_terms(words, seen_text, same=vkind == VIEW_SAME, agent_lines=found)
            if vkind != VIEW_HIDDEN and seen_text is not None and risky != 2
            else (None, None)
        )
        if vtext is not None:
            found = found + lines(vtext)
        if risky == 0 and holds_long_token(found, LEX_MAX):
            risky = _RISKY_LONG
            found = found + long_token_windows(found, LEX_MAX)
        # each distinct line once: people's text mostly repeats the agent's (tool output)
        body = "\n".join(set(found)) if found else None
        values = (
            line.start,
            line.end - line.start,
            digest(line.raw) if line.raw is not None else None,
            kind,
            self.win,
            id_bytes(self.wid),
            wkind,
            id_bytes(item.item_id) if item is not None else None,
            id_bytes(item.row_id) if item is not None else None,
            item.role if item is not None else (row.role if row is not None else None),
            tools,
            item.timestamp if item is not None else None,
            vkind,
            id_bytes(self.hwin),
            risky,
            int(item is not None and item.machine),
            plen,
        )
        return Record(values, words, pwords, body, line.start, line.end)


def _risky(text: str | None) -> bool:
    # str.isascii() reads a flag CPython keeps: most rows never reach the search
    return text is not None and not text.isascii() and _RISKY.search(text) is not None


@dataclass(slots=True)
class Batch:
    """What a run of records puts into the tables, as plain values (a worker process sends
    it as it is, :mod:`segue._retrieval.index_build_worker`): the ``rows`` values, the
    ``(rowid, text)`` pairs of ``lit``, ``words`` and ``pwords``, and the global end of its
    last line."""

    rows: list[tuple[object, ...]]
    lit: list[tuple[int, str]]
    words: list[tuple[int, str]]
    pwords: list[tuple[int, str]]
    end: int = 0
    number: int = 0  # its place among a rebuild's batches

    @classmethod
    def of(cls, records: list[Record], end: int = 0, number: int = 0) -> Batch:
        return cls(
            [r.values for r in records],
            [(r.pos, r.body) for r in records if r.body is not None],
            [(r.pos, r.words) for r in records if r.words is not None],
            [(r.pos, r.pwords) for r in records if r.pwords is not None],
            end,
            number,
        )

    def distinct(self) -> set[str]:
        """The distinct lines of its ``lit`` texts."""
        found: set[str] = set()
        for _, body in self.lit:
            found.update(lines(body))
        return found


def _insert(
    conn: sqlite3.Connection,
    records: list[Record],
    *,
    known: set[str] | None = None,
) -> set[str]:
    """Insert the records' rows and search tables, ``lex`` included; returns the distinct
    lines whose tokens went into ``lex``. ``known``: lines whose tokens this file's ``lex``
    already holds (:class:`_Known`), not tokenized again."""
    batch = Batch.of(records)
    insert_batch(conn, batch)
    found = batch.distinct()
    fresh = found - known if known else found
    terms = [(t,) for t in line_tokens(fresh) if len(t) <= LEX_MAX]
    (top,) = conn.execute("SELECT coalesce(max(id), 0) FROM lex").fetchone()
    before = conn.total_changes
    conn.executemany("INSERT OR IGNORE INTO lex (term) VALUES (?)", terms)
    if conn.total_changes != before:  # lex grew (this makes FTS5 write every pending segment)
        conn.execute("INSERT INTO lexgrams (rowid, term) SELECT id, term FROM lex WHERE id > ?",
                     (top,))
    return found


def insert_batch(conn: sqlite3.Connection, batch: Batch) -> None:
    """Insert a batch's rows, ``lit`` and ``words`` (not ``lex``: a whole rebuild fills it
    once, at its end, :func:`_lexicon`)."""
    conn.executemany(_INSERT, batch.rows)
    conn.executemany("INSERT INTO lit (rowid, body) VALUES (?, ?)", batch.lit)
    # items only: what the agent's words search finds
    conn.executemany("INSERT INTO words (rowid, terms) VALUES (?, ?)", batch.words)
    conn.executemany("INSERT INTO pwords (rowid, terms) VALUES (?, ?)", batch.pwords)


@dataclass
class _Known:
    """Lines whose tokens one index file's ``lex`` holds, as this process committed them:
    the file (its random ``lexicon`` name) and how far it had read (``chat_read``). Used only
    while the file is exactly there (an older copy put back reads less far), and updated only
    after a commit, so it never names a line whose tokens the file lacks."""

    lexicon: str
    at: int
    lines: set[str]
    chars: int = 0

    def full(self) -> bool:
        return self.chars > _KNOWN_CHARS

    def add(self, found: set[str]) -> None:
        if self.chars > _KNOWN_CHARS:
            return
        for line in found - self.lines:
            if self.chars > _KNOWN_CHARS:
                return
            self.lines.add(line)
            self.chars += len(line)


_KNOWN_CHARS = 4 << 20  # characters of remembered lines
_known: _Known | None = None  # one file at a time


def _lexicon_name(conn: sqlite3.Connection) -> str | None:
    row = conn.execute("SELECT v FROM meta WHERE k = 'lexicon'").fetchone()
    return None if row is None else str(row[0])


def _lexicon(conn: sqlite3.Connection) -> None:
    """Fill ``lex`` and ``lexgrams`` from the tokens ``lit`` holds (one pass in SQLite over
    its vocabulary, instead of each batch's tokens from Python)."""
    conn.execute("CREATE VIRTUAL TABLE temp.lit_terms USING fts5vocab(main, lit, row)")
    try:
        conn.execute(
            "INSERT OR IGNORE INTO lex (term) SELECT term FROM temp.lit_terms "
            "WHERE length(term) <= ?",
            (LEX_MAX,),
        )
        conn.execute("INSERT INTO lexgrams (rowid, term) SELECT id, term FROM lex")
    finally:
        conn.execute("DROP TABLE temp.lit_terms")


def _index_lines(
    conn: sqlite3.Connection,
    batches: Iterable[Batch],
    *,
    progress: Progress | None = None,
    total: int = 0,
) -> None:
    """Insert every batch, then fill ``lex``."""
    for batch in batches:
        insert_batch(conn, batch)
        if progress is not None:
            progress(batch.end, total)
    _lexicon(conn)
    for statement in _INDEXES:  # built once from the whole table: cheaper than kept up
        conn.execute(statement)


def _same_files(then: Snapshot, now: Snapshot) -> bool:
    if not now.trusted or now.epoch != then.epoch or now.archive != then.archive:
        return False
    if then.chat is None:
        return True
    return (
        now.chat is not None
        and (now.chat.dev, now.chat.ino) == (then.chat.dev, then.chat.ino)
        and now.chat_size >= then.chat_size
    )


def claim_side_file(layout: Layout, *, untrusted: str) -> tuple[int, Snapshot, Path]:
    """Whether a build may start now, then the side file opened and locked exclusively:
    ``(fd, snapshot, path)``, the caller closes ``fd``. :class:`NotBuilt` (``untrusted`` its
    message when the receipt does not vouch for the files) when no build can run now."""
    if not layout.session_dir.is_dir():
        raise NotBuilt("the workspace has no transcript")
    if stream_in_progress(layout):
        raise NotBuilt("a Xum stream is in progress (partial.json is newer than the transcript)")
    snap = take(layout)
    if not snap.trusted:
        raise NotBuilt(untrusted)
    path = build_path(layout)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)  # R38: every file segue makes
    except OSError as exc:
        raise NotBuilt(f"cannot write {path}: {exc.strerror}") from None
    with contextlib.suppress(OSError):  # a side file left by an older segue, made 0644
        os.fchmod(fd, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise NotBuilt("another process is building the index") from None
    return fd, snap, path


def rebuild(layout: Layout, progress: Progress | None = None) -> Meta:
    """Build the index from the whole transcript and put it in place (see the module
    docstring). Raises :class:`NotBuilt` when it cannot be built now."""
    fd, snap, path = claim_side_file(
        layout,
        untrusted="the receipt does not vouch for the transcript files; run a command "
        "that writes (recovery runs first) and try again",
    )
    try:
        os.ftruncate(fd, 0)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(str(path) + "-journal")
        try:
            with no_gc():
                meta, seen = _build_into(layout, snap, str(path), progress, fd)
        except (HistoryMoved, OSError):
            # read without the lock: a rotation or rewrite moved the files under us
            meta = None
        except sqlite3.Error as exc:
            os.unlink(path)
            raise NotBuilt(f"the index could not be written: {exc}") from None
        except index_build_worker.WorkerLost as exc:
            os.unlink(path)
            raise NotBuilt(str(exc)) from None
        os.fsync(fd)
        if meta is None:
            os.unlink(path)
            raise NotBuilt("the transcript was rewritten while it was indexed")
        if not _same_files(snap, take(layout)):
            os.unlink(path)
            raise NotBuilt("the transcript was rewritten while it was indexed")
        os.replace(path, index_path(layout))
        fsync_dir(layout.index_dir)
        global _known  # noqa: PLW0603 (the process's memory of one file, see _Known)
        _known = seen if seen.lexicon else None
        return meta
    finally:
        os.close(fd)


def _build_into(
    layout: Layout, snap: Snapshot, path: str, progress: Progress | None, lock_fd: int
) -> tuple[Meta, _Known]:
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode=OFF")  # a crashed build is thrown away whole
        conn.execute("PRAGMA synchronous=OFF")
        conn.executescript(_TABLES)
        conn.execute("BEGIN")
        a = snap.archive_size
        segs = [
            Segment(layout.archive, 0, a),
            Segment(layout.chat, a, a + snap.chat_size),
        ]
        walker = Walker()
        reader = ForwardReader(segs, FwdState(0), Budget(_UNBOUNDED, _UNBOUNDED))
        total = a + snap.chat_size
        seen = _Known(_lexicon_name(conn) or "", 0, set())
        from segue._retrieval.index_build_split import Scan, batches

        scan = Scan()
        _index_lines(
            conn,
            batches(segs, reader, walker, scan, seen, lock_fd=lock_fd),
            progress=progress,
            total=total,
        )
        torn = scan.torn
        chat_read = (torn if torn is not None else total) - a
        meta = Meta(
            schema=schema_id(),
            workspace=layout.workspace_id,
            epoch=snap.epoch,
            archive=stamp_list(snap.archive),
            chat_file=[snap.chat.dev, snap.chat.ino] if snap.chat is not None else None,
            archive_size=a,
            chat_read=chat_read,
            win=walker.win,
            wid=walker.wid,
            hwin=walker.hwin,
            complete=True,
        )
        write_meta(conn, meta)
        conn.execute("COMMIT")
        conn.execute("PRAGMA journal_mode=DELETE")  # what every later writer uses
        if progress is not None:
            progress(total, total)
        seen.at = chat_read
        return meta, seen
    finally:
        conn.close()


@no_gc()
def catch_up(
    conn: sqlite3.Connection,
    layout: Layout,
    meta: Meta,
    snap: Snapshot,
    max_bytes: int | None = None,
    *,
    deadline: float | None = None,
) -> Meta:
    """Index the chat bytes appended since ``meta.chat_read`` (the store lock is held by the
    caller; the index was checked against ``snap``), at most ``max_bytes`` and, with
    ``deadline`` (a :func:`time.monotonic` value), up to the first line read after it; the
    rest waits for the next call. Returns the new metadata."""
    end = snap.chat_size
    if meta.chat_read >= end:
        return meta
    a = snap.archive_size
    _check_last(conn, layout, a)
    walker = Walker(meta.win, meta.wid, meta.hwin)
    limit = CATCH_UP_BYTES if max_bytes is None else max_bytes
    reader = StepLines([Segment(layout.chat, a, a + end)], a + meta.chat_read, limit)
    name = _lexicon_name(conn)
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.Error as exc:
        raise IndexUnusable(f"index is locked: {exc}") from None
    global _known  # noqa: PLW0603 (the process's memory of one file, see _Known)
    known = _known if _known is not None and (_known.lexicon, _known.at) == (
        name, meta.chat_read) else None  # fmt: skip
    lines = known.lines if known is not None else None
    _known = None  # until this commit is in
    added: set[str] = set()
    try:
        done = a + meta.chat_read
        batch: list[Record] = []
        per_row: float | None = None  # what an insert took per row in this call
        for line in reader:
            if not line.complete:
                break
            batch.append(walker.record(line))
            done = line.end
            full = len(batch) >= _BATCH
            if deadline is not None and (full or len(batch) % _TIMED_BATCH == 0):
                # Insert in large batches (small ones cost more per row) but never let the
                # next one end past the deadline: the clock is read every _TIMED_BATCH rows,
                # and an insert's cost is known from the call's first (small) one.
                now = time.monotonic()
                if full or per_row is None or now + per_row * len(batch) >= deadline:
                    added |= _insert(conn, batch, known=lines)
                    per_row = (time.monotonic() - now) / len(batch)
                    batch = []
                    if time.monotonic() >= deadline:
                        break  # the clock is read after an insert, so its cost is counted
            elif full:
                added |= _insert(conn, batch, known=lines)
                batch = []
        if batch:
            added |= _insert(conn, batch, known=lines)
        chat_file = [snap.chat.dev, snap.chat.ino] if snap.chat is not None else None
        new = Meta(**{**meta.__dict__, "chat_read": done - a, "win": walker.win,
                      "wid": walker.wid, "hwin": walker.hwin, "chat_file": chat_file})  # fmt: skip
        write_meta(conn, new)
        conn.execute("COMMIT")
        if name is not None:
            _known = known if known is not None else _Known(name, 0, set())
            _known.add(added)
            _known.at = new.chat_read
        return new
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")
        raise


class StepLines:
    """The lines of one catch-up or rebuild step, streamed: about ``max_bytes`` of them, and
    at least one (a line longer than a step is read whole, 64 KiB at a time, never held, so
    it cannot stop every step short of it). ``more``: the step stopped before the end."""

    def __init__(self, segs: list[Segment], pos: int, max_bytes: int) -> None:
        self.segs, self.pos, self.max_bytes = segs, pos, max_bytes
        self.more = False

    def __iter__(self) -> Iterator[RawLine]:
        reader = ForwardReader(self.segs, FwdState(self.pos), Budget(self.max_bytes, _UNBOUNDED))
        count = 0
        for line in reader:
            count += 1
            yield line
        if count == 0 and reader.exhausted:
            whole = ForwardReader(self.segs, FwdState(self.pos), Budget(_UNBOUNDED, _UNBOUNDED))
            for line in whole:
                self.more = True  # whatever follows waits for the next step
                yield line
                return
        self.more = reader.exhausted


def _check_last(conn: sqlite3.Connection, layout: Layout, archive_size: int) -> None:
    """The newest indexed line must still be there, byte for byte, before more is added."""
    last = conn.execute(
        "SELECT pos, len, digest FROM rows WHERE digest IS NOT NULL ORDER BY pos DESC LIMIT 1"
    ).fetchone()
    if last is None:
        return
    pos, length, want = int(last[0]), int(last[1]), bytes(last[2])
    path, local = (layout.archive, pos) if pos < archive_size else (layout.chat, pos - archive_size)
    data = read_span(path, local, length)
    if data is None or not data.endswith(b"\n") or digest(data[:-1]) != want:
        raise IndexUnusable("the last indexed row is not in the transcript any more")
