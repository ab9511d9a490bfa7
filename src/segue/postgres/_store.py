"""PostgresStore: the TranscriptStore protocol in PostgreSQL (SPEC.md §8).

Invariants (the JSONL store's, kept with the database's own tools):

* Every mutation is one transaction that first takes ``pg_advisory_xact_lock`` on a stable
  64-bit hash of the workspace id (the per-workspace lock of R28), then the workspace row
  ``FOR UPDATE``. A batch is all-or-nothing across a killed client, a dropped connection or a
  restarted server because PostgreSQL commits it whole or not at all; ``append`` returns only
  after the commit, so an acknowledged batch is durable (with the server's fsync on).
* ``historySequence`` comes from the workspace row's ``next_sequence``, which only ever
  grows (a hard clear keeps it): strictly increasing across every client, never reused.
* Each line keeps its exact bytes; readers get the very ``StoredLine`` values the JSONL store
  would give for the same lines: the same source (rows before ``chat_pos`` are the archive),
  byte offsets, lengths, parsed rows and reset markers.
* Each line is stored with what readers derive from it (``rows``: people's window and
  text, the agent's kind, window, ids and projected text), computed in the transaction that
  stores it; a quarantine derives its row again (``derive``).
* The epoch (R26/R29): a verified append keeps it; a rotation, quarantine or hard clear sets
  a new one, exactly where the JSONL store publishes a new receipt epoch.
* ``locked()`` holds the same key with ``pg_advisory_xact_lock`` in a transaction of its
  own that stays open for the block (re-entrant), so a caller's read-modify-append sequence
  is serialised with every other client's mutations; each append inside it still commits
  on its own (and skips the lock its holder has). No session state outlives a transaction
  (no session lock, no ``SET``, no prepared statement), so the store works behind PgBouncer
  in transaction mode, and stores may share a pool (:func:`shared_pool`).
* An append of up to ``PIPELINE_ROWS`` rows planned from the state this store's own last
  commit left is one statement, ``segue_append`` (``append_call``: the lock, the workspace
  row's update guarded by that whole state, the rows, the ``NOTIFY``, in the statement's
  own transaction); a failed guard leaves nothing and the append then holds the lock for
  a whole transaction, reading the state under it. Larger batches go through COPY under
  the lock. Each commit sends ``NOTIFY`` on the workspace's channel (``history follow``).
* Reads run in a REPEATABLE READ, read-only transaction on a connection of their own, so a
  listing sees one consistent history however long it takes to consume.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any

from segue._context.boundaries import is_boundary
from segue._context.floor import is_floor_bytes
from segue._errors import LockTimeout, StoreError
from segue._history.batch import encode_batch, parse_import, stamp
from segue._history.protocol import Entry
from segue._history.quarantine import quarantined
from segue._history.receipt import new_epoch
from segue._history.reports import RecoveryReport, VerifyReport
from segue._history.scan import Source, StoredLine, parse_line
from segue._messages import Row, encode_row
from segue.postgres._append import (
    PIPELINE_ROWS,
    UPDATE,
    WorkspaceState,
    plan,
    state_of,
    state_values,
)
from segue.postgres._append import copy_rows as _copy
from segue.postgres._append_call import call_append, call_params, row_type
from segue.postgres._bulk import raw_lines as _raw_lines
from segue.postgres._derive import fingerprint, rederive, rederive_row
from segue.postgres._keys import lock_key, notify_channel
from segue.postgres._lexicon import Committed
from segue.postgres._pool import shared_pool
from segue.postgres._rows import ROOT_POS, Prepared, prepare, searchable
from segue.postgres._schema import connect, ensure_schema, redact, translated
from segue.postgres._snapshot import PgLine, PgSnapshot, chat_off, entries

if TYPE_CHECKING:
    from pathlib import Path

    import psycopg
    from psycopg_pool import ConnectionPool

    from segue._history.watch import Watch
    from segue._retrieval.backends import Backend
    from segue.postgres._binary import RowType

_FETCH = 256
_STATE = (
    "SELECT epoch, next_sequence, next_pos, next_off, chat_pos, window_id, agent_win, derived"
    " FROM segue_workspaces WHERE workspace = %s"
)
_STATE_FOR_UPDATE = _STATE + " FOR UPDATE"
#: one-statement attempts before an append takes the lock for its whole transaction (8
#: writers on one workspace: 1 costs half the CPU per batch of 4, at the same rate)
_ATTEMPTS = 1
#: the state given when there is none to plan from (its NULL epoch matches no workspace)
_NO_STATE = WorkspaceState(None, 0, 0, 0, 0, "w:0", ROOT_POS, "")  # type: ignore[arg-type]


class PostgresStore:
    """The transcript of one workspace in a PostgreSQL database."""

    def __init__(
        self,
        url: str,
        workspace_id: str,
        *,
        lock_timeout: float = 30.0,
        pool: ConnectionPool[Any] | None = None,
    ) -> None:
        self.url = url
        #: connections borrowed per transaction from a pool shared with other stores
        #: (:func:`shared_pool`), else the store's own
        self.pool = pool
        self.workspace_id = workspace_id
        self.lock_timeout = lock_timeout
        self._key = lock_key(workspace_id)
        self._channel = notify_channel(workspace_id)
        self._conn: psycopg.Connection[Any] | None = None
        self._readers: list[psycopg.Connection[Any]] = []
        self._held = 0
        self._holder: psycopg.Connection[Any] | None = None
        #: the workspace's state as this store's last append left it (None: not known)
        self._known: WorkspaceState | None = None
        self._lexed = Committed()  # literal tokens in the vocabulary, not sent again
        self._row_type: RowType | None = None  # segue_rows' record type (append_call)

    # -- connections ---------------------------------------------------------------------------

    def _open(self) -> psycopg.Connection[Any]:
        conn = connect(self.url, timeout=self.lock_timeout)
        try:
            ensure_schema(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    def _writer(self) -> psycopg.Connection[Any]:
        if self._conn is None or self._conn.closed or self._conn.broken:
            self._conn = self._open()
        return self._conn

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        """A connection for one transaction (or one statement): borrowed from the pool and
        given back after it, or the store's own."""
        if self.pool is None:
            yield self._writer()
            return
        with self.pool.connection() as conn:
            yield conn

    def close(self) -> None:
        """Close the store's own connections (a shared pool stays open for the others)."""
        for conn in [self._conn, *self._readers]:
            if conn is not None:
                conn.close()
        self._conn = None
        self._readers = []

    def sibling(self, workspace_id: str) -> PostgresStore:
        """The store of another workspace in the same database (a task's child), with this
        store's lock timeout and pool."""
        return PostgresStore(self.url, workspace_id, lock_timeout=self.lock_timeout,
                             pool=self.pool)  # fmt: skip

    def watch(self) -> Watch:
        """What ``history follow`` waits on: ``LISTEN`` on this workspace's channel."""
        from segue.postgres._watch import ListenWatch

        return ListenWatch(self.url, self.workspace_id)

    def lookback_backend(self, *, rederive: bool = True) -> Backend:
        """``session_history`` over this store, answered in SQL (``rederive``: derive rows
        again that another version of segue derived; without it nothing is written)."""
        from segue.postgres._backend import PostgresBackend

        return PostgresBackend(self, rederive=rederive)

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- locking -------------------------------------------------------------------------------

    def locked(self) -> AbstractContextManager[None]:
        return self._held_lock()

    @contextmanager
    def _held_lock(self) -> Iterator[None]:
        """The workspace lock for a caller's read-modify-append sequence, without session
        state: a transaction of its own (on a connection of its own) takes the
        transaction-level advisory lock and stays open until the block ends, so it works
        behind PgBouncer in transaction mode too. The store's own mutations inside the
        block commit on their own and skip the lock (its holder is this store)."""
        if self._held:
            self._held += 1
            try:
                yield
            finally:
                self._held -= 1
            return
        with translated("cannot lock the workspace", self.url):
            holder = self.pool.getconn() if self.pool is not None else self._open()
        try:
            with translated("cannot lock the workspace", self.url):
                holder.execute("BEGIN")
                self._take_lock(holder)
            self._held, self._holder = 1, holder
            try:
                yield
            finally:
                self._held, self._holder = 0, None
                if not holder.closed and not holder.broken:
                    with translated("cannot unlock the workspace", self.url):
                        holder.execute("COMMIT")
        finally:
            self._give_back(holder)

    def _give_back(self, conn: psycopg.Connection[Any]) -> None:
        if not conn.closed and not conn.broken and conn.info.transaction_status.name != "IDLE":
            with contextlib.suppress(Exception):
                conn.execute("ROLLBACK")
        if self.pool is not None:
            self.pool.putconn(conn)
        else:
            conn.close()

    def _xact_lock(self, conn: psycopg.Connection[Any]) -> None:
        """The workspace's advisory lock for this transaction, waiting at most the store's
        lock timeout (set for this transaction only: no session state is left behind).
        Inside :meth:`locked` the holder's transaction has it already."""
        if self._held:
            self._check_holder()
            return
        self._take_lock(conn)

    def _check_holder(self) -> None:
        """Inside :meth:`locked`: the holder's connection still holds the lock."""
        if not self._held:
            return
        holder = self._holder
        if holder is None or holder.closed or holder.broken:
            # the lock died with its connection: what the caller holds it for can no
            # longer be serialised
            raise StoreError(
                f"lost the connection to the PostgreSQL store {redact(self.url)} while "
                "holding the workspace lock",
                code="store_unavailable",
            )

    def _take_lock(self, conn: psycopg.Connection[Any]) -> None:
        import psycopg

        ms = max(1, int(self.lock_timeout * 1000))
        try:
            conn.execute(
                "SELECT set_config('lock_timeout', %s, true), pg_advisory_xact_lock(%s)",
                (f"{ms}ms", self._key),
            )
        except psycopg.errors.LockNotAvailable:
            raise LockTimeout(self._lock_name(), self.lock_timeout) from None

    def _lock_name(self) -> Path:
        from pathlib import Path

        return Path(f"{redact(self.url)}#workspace={self.workspace_id}")

    @contextmanager
    def _mutation(self, what: str) -> Iterator[tuple[psycopg.Connection[Any], WorkspaceState]]:
        """One transaction under the workspace's advisory lock, with its state row locked."""
        self._known = None
        with translated(what, self.url), self._connection() as conn, conn.transaction():
            self._xact_lock(conn)
            conn.execute(
                "INSERT INTO segue_workspaces (workspace, epoch, derived)"
                " VALUES (%s, %s, %s) ON CONFLICT (workspace) DO NOTHING",
                (self.workspace_id, new_epoch(), fingerprint()),
            )
            yield conn, self._state(conn, lock=True)

    def _state(self, conn: psycopg.Connection[Any], *, lock: bool = False) -> WorkspaceState:
        return state_of(
            conn.execute(_STATE_FOR_UPDATE if lock else _STATE, (self.workspace_id,)).fetchone()
        )

    # -- state seen from outside -----------------------------------------------------------------

    def epoch(self) -> str:
        """The workspace's epoch now ("" before its first write)."""
        with translated("cannot read the workspace", self.url), self._connection() as conn:
            return self._state(conn).epoch

    def next_sequence(self) -> int:
        with translated("cannot read the workspace", self.url), self._connection() as conn:
            return self._state(conn).next_sequence

    # -- append ----------------------------------------------------------------------------------

    def append(self, rows: Sequence[Row]) -> list[Row]:
        if not rows:
            return []
        known = self._known
        self._known = None  # set again only by a commit this store saw succeed
        if len(rows) > PIPELINE_ROWS:
            # Encode once without the lock to fail early on an unencodable row; the real
            # batch is stamped inside the transaction.
            encode_batch(rows)
            with self._mutation("cannot append to the transcript") as (conn, state):
                stored, raws = self._stamped(rows, state)
                after = self._insert(
                    conn, state, raws, next_sequence=state.next_sequence + len(rows)
                )
            self._known = after
            return stored
        done = self._append_call(rows, known)
        return done if done is not None else self._append_locked(rows)

    def _stamped(self, rows: Sequence[Row], state: WorkspaceState) -> tuple[list[Row], list[bytes]]:
        stored = stamp(rows, state.next_sequence, self.workspace_id)
        data, _ = encode_batch(stored)
        return stored, data.split(b"\n")[:-1]

    def _call(
        self,
        conn: psycopg.Connection[Any],
        rows: Sequence[Row],
        known: WorkspaceState | None,
        *,
        lock: bool,
    ) -> tuple[list[Row], WorkspaceState | None]:
        """One call of ``segue_append`` for ``rows`` planned from ``known`` (None: no rows,
        only the workspace's state). Returns the stored rows and None when the batch was
        stored (``self._known`` is the state after it), else the state to plan from."""
        import psycopg

        stored: list[Row] = []
        prepared: list[Prepared] = []
        after = known
        if known is not None:
            stored, raws = self._stamped(rows, known)
            prepared, after = plan(known, raws, next_sequence=known.next_sequence + len(rows))
        if lock:
            self._check_holder()
        if self._row_type is None:
            self._row_type = row_type(conn)
        params = call_params(
            self.workspace_id,
            self._row_type,
            lock_key=self._key if lock and not self._held else None,
            lock_timeout_ms=max(1, int(self.lock_timeout * 1000)),
            channel=self._channel,
            fresh_epoch=new_epoch(),
            fresh_derived=fingerprint(),
            known=known if known is not None else _NO_STATE,
            after=after if after is not None else _NO_STATE,
            lines=prepared,
            lex=self._lexed.fresh(prepared),
        )
        try:
            moved = call_append(conn, params)
        except psycopg.errors.LockNotAvailable:
            raise LockTimeout(self._lock_name(), self.lock_timeout) from None
        if moved is None and after is not None:
            self._known = after
            self._lexed.sent(committed=conn.info.transaction_status.name == "IDLE")
        return stored, moved

    def _append_call(self, rows: Sequence[Row], known: WorkspaceState | None) -> list[Row] | None:
        """The append in one statement, planned from the state this store's last commit
        left (or, the first time, the state a first call without rows reads). A miss
        (another client moved the workspace on) wrote nothing; after :data:`_ATTEMPTS`
        misses None (the caller takes the lock for the whole transaction: under contention
        that waits on the lock instead of planning the batch again and again)."""
        with translated("cannot append to the transcript", self.url), \
                self._connection() as conn:
            state = known
            if state is None:
                _, state = self._call(conn, rows, None, lock=True)
            for _ in range(_ATTEMPTS):
                if state is None:
                    break
                stored, state = self._call(conn, rows, state, lock=True)
                if state is None:
                    return stored
        return None

    def _append_locked(self, rows: Sequence[Row]) -> list[Row]:
        """The append with the workspace lock held for its whole transaction: read the
        state under it, then store the batch planned from it (the guard cannot miss)."""
        with translated("cannot append to the transcript", self.url), \
                self._connection() as conn, conn.transaction():
            _, state = self._call(conn, rows, None, lock=True)
            if state is None:
                raise StoreError("the workspace row vanished under its lock")
            stored, missed = self._call(conn, rows, state, lock=False)
            if missed is not None:
                raise StoreError("the workspace moved on under its lock")
        self._lexed.committed()
        return stored

    def _insert(
        self,
        conn: psycopg.Connection[Any],
        state: WorkspaceState,
        raws: Sequence[bytes],
        *,
        next_sequence: int,
    ) -> WorkspaceState:
        """Insert a batch at the end and advance the workspace row; the state it leaves."""
        prepared, after = plan(state, raws, next_sequence=next_sequence)
        _copy(conn, self.workspace_id, prepared)
        conn.execute(UPDATE, (*state_values(after), self.workspace_id))
        self._notify(conn)
        return after

    def _notify(self, conn: psycopg.Connection[Any]) -> None:
        """Wake the workspace's followers (``history follow``) when this transaction
        commits; PostgreSQL delivers nothing if it does not."""
        conn.execute("SELECT pg_notify(%s, '')", (self._channel,))

    def import_rows(self, data: bytes) -> list[Row]:
        return self.append(parse_import(data))

    def load_lines(self, lines: Iterable[tuple[Source, bytes]], next_sequence: int) -> None:
        """Copy lines byte for byte into an empty workspace (``history migrate``): archive
        lines first, then chat lines, and the sequence floor (:func:`load.load_lines`)."""
        from segue.postgres._load import load_lines

        load_lines(self, lines, next_sequence)

    def raw_lines(self) -> Iterator[tuple[Source, int, int | None, bytes]]:
        """Every line as ``(source, offset, historySequence, exact bytes)``, oldest first,
        from one snapshot, without parsing a row (``history migrate``); its ``verify``
        problems are :class:`bulk.LineCheck`'s on this stream."""
        with self.snapshot() as snap:
            yield from _raw_lines(snap.conn, self.workspace_id, snap.state.chat_pos)

    def _has_rows(self, conn: psycopg.Connection[Any]) -> bool:
        got = conn.execute(
            "SELECT EXISTS (SELECT 1 FROM segue_rows WHERE workspace = %s)",
            (self.workspace_id,),
        ).fetchone()
        return bool(got is not None and got[0])

    # -- rewrites --------------------------------------------------------------------------------

    def quarantine(self, item_id: str, *, send_failure: str | None = None) -> Row:
        with self._mutation("cannot quarantine the item") as (conn, state):
            found = conn.execute(
                "SELECT pos, off, raw FROM segue_rows WHERE workspace = %s AND item = %s"
                " ORDER BY pos DESC LIMIT 1",
                (self.workspace_id, item_id),
            ).fetchone()
            row = parse_line(bytes(found[2])) if found is not None else None
            if found is None or row is None:
                raise StoreError(f"no item {item_id!r} in the transcript", code="item_not_found")
            if is_boundary(row) or is_floor_bytes(bytes(found[2])):
                raise StoreError(
                    f"item {item_id!r} is a context boundary and cannot be quarantined",
                    code="not_quarantinable",
                )
            new = quarantined(row, send_failure=send_failure)
            if new is row:
                return new
            pos, off, old = int(found[0]), int(found[1]), bytes(found[2])
            raw = encode_row(new)
            (p,), _, _ = prepare([raw], pos=pos, off=off, window_id=state.window_id)
            conn.execute(
                "UPDATE segue_rows SET raw = %s, seq = %s, item = %s, marker = %s, body = %s"
                " WHERE workspace = %s AND pos = %s",
                (raw, p.seq, p.item, p.marker, p.body, self.workspace_id, pos),
            )
            delta = len(raw) - len(old)
            if delta:
                conn.execute(
                    "UPDATE segue_rows SET off = off + %s WHERE workspace = %s AND pos > %s",
                    (delta, self.workspace_id, pos),
                )
            rederive_row(conn, self.workspace_id, pos)
            conn.execute(
                "UPDATE segue_workspaces SET epoch = %s, next_off = next_off + %s"
                " WHERE workspace = %s",
                (new_epoch(), delta, self.workspace_id),
            )
            return new

    def rederive(self) -> None:
        """Derive the agent's columns of the whole workspace again with this code (their
        fingerprint differed: derive). Not a change of the history: the epoch stays."""
        with self._mutation("cannot derive the transcript's columns") as (conn, state):
            if state.derived != fingerprint():
                rederive(conn, self.workspace_id)

    def clear_all(self) -> None:
        with self._mutation("cannot clear the transcript") as (conn, _state):
            conn.execute("DELETE FROM segue_rows WHERE workspace = %s", (self.workspace_id,))
            conn.execute(
                "UPDATE segue_workspaces SET epoch = %s, next_off = 0, chat_pos = next_pos,"
                " window_id = 'w:0', agent_win = %s, derived = %s WHERE workspace = %s",
                (new_epoch(), ROOT_POS, fingerprint(), self.workspace_id),
            )

    def recover(self) -> RecoveryReport:
        # Nothing is ever half-written: a transaction that did not commit left no trace.
        return RecoveryReport(receipt_verified=True)

    # -- reads -----------------------------------------------------------------------------------

    def _reader(self) -> psycopg.Connection[Any]:
        if self.pool is not None:
            borrowed: psycopg.Connection[Any] = self.pool.getconn()
            return borrowed
        while self._readers:
            conn = self._readers.pop()
            if not conn.closed and not conn.broken:
                return conn
        return self._open()

    def _release(self, conn: psycopg.Connection[Any]) -> None:
        if self.pool is not None:
            self.pool.putconn(conn)
            return
        if conn.closed or conn.broken:
            return
        if len(self._readers) < 2:
            self._readers.append(conn)
        else:
            conn.close()

    @contextmanager
    def snapshot(self) -> Iterator[PgSnapshot]:
        """One consistent, read-only view of the workspace (REPEATABLE READ)."""
        with translated("cannot read the transcript", self.url):
            conn = self._reader()
        try:
            from psycopg import IsolationLevel  # loaded: the connection is psycopg's

            # BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY: one round trip, not two
            conn.isolation_level, conn.read_only = IsolationLevel.REPEATABLE_READ, True
            with translated("cannot read the transcript", self.url), conn.transaction():
                state = self._state(conn)
                snap = PgSnapshot(self, conn, state, chat_off(conn, self.workspace_id, state))
                yield snap
        finally:
            with contextlib.suppress(Exception):  # a broken connection is not reused
                conn.isolation_level, conn.read_only = None, None
            self._release(conn)

    def _query(self, where: str, params: tuple[Any, ...], order: str) -> Iterator[PgLine]:
        with self.snapshot() as snap:
            yield from snap.lines(where, params, order)

    def lines(self) -> Iterator[StoredLine]:
        for found in self._query("true", (), "ASC"):
            yield found.line

    def lines_reverse(self) -> Iterator[StoredLine]:
        for found in self._query("true", (), "DESC"):
            yield found.line

    def read_locked(self) -> AbstractContextManager[None]:
        """A reader's hold: the advisory lock, so two passes read the same history."""
        return self.locked()

    def rows(self) -> Iterator[Row]:
        for line in self.lines():
            if line.row is not None:
                yield line.row

    def entries(self) -> Iterator[Entry]:
        return entries(self.snapshot, "ASC")

    def entries_reverse(self) -> Iterator[Entry]:
        return entries(self.snapshot, "DESC")

    def verify(self) -> VerifyReport:
        from segue.postgres._verify import verify_lines

        return verify_lines(self.lines(), self.next_sequence())


__all__ = [
    "PgLine", "PgSnapshot", "PostgresStore", "WorkspaceState", "lock_key", "notify_channel",
    "searchable", "shared_pool",
]
