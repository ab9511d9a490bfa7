"""The PostgreSQL store (SPEC.md §8) as a look-back backend, answered in SQL.

Each call is one bounded page read in **one** REPEATABLE READ, read-only transaction, so
the floor, the rows and the workspace's epoch are those of one instant whatever other
machines append meanwhile. The transaction opens with one round trip (:func:`_call`): its
``BEGIN`` pipelined with one statement that reads the workspace row, the chat's first
offset and the floor (R11: the newest floor candidate, as of the call and in the snapshot
the rows are read in) and turns sequential scans off (and gives the words ranking's
aggregates the memory they need) for the rest of the transaction, and for a literal search
the vocabulary lookup of its pieces, which needs nothing the head reads; a literal search
then takes one more (the candidates with their rows), a words search in relevance order
one (the ranking with its first rows), and the end of the transaction one
(tests/postgres/test_lookback_round_trips.py counts the statements). No session state
is left behind: no prepared statement, no ``SET`` outside the transaction, so PgBouncer in
transaction mode serves it as any other.

A cursor stays valid while the workspace's epoch does: a verified append keeps it, every
rewrite (rotation, quarantine, hard clear, a migrated-in copy) sets a new one, and the
cursor then expires (``stale_cursor``) as it does on disk (R26, R29). The pages come from
:mod:`segue.postgres._pages`, shaped and bounded by the scan's own code.

A lost connection or a server restart during the page answers ``history_changed`` (call
again): the transaction saw nothing, so nothing from below a floor can leak. Rows whose
agent columns were derived by another version of segue are derived again first
(:mod:`segue.postgres._derive`), or, for a reader that must not write, the call says so.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from segue._errors import LockTimeout, StoreError
from segue._retrieval import pages
from segue._retrieval.cursor import CursorState
from segue._retrieval.cursor import snapshot_of as cursor_snapshot
from segue._retrieval.snapshot import Snapshot, continuation_ok
from segue._workspace import Layout
from segue.postgres import _lexicon as lexicon
from segue.postgres import _pages as sql_pages
from segue.postgres._append import state_of
from segue.postgres._derive import fingerprint
from segue.postgres._rows import KIND_FLOOR, ROOT_POS
from segue.postgres._schema import redact, translated
from segue.postgres._store import PgSnapshot, PostgresStore, WorkspaceState

if TYPE_CHECKING:
    from segue._retrieval.schema import Request
    from segue._views.windows import Hit


def snapshot_of(state: WorkspaceState) -> Snapshot:
    """The workspace row as the cursor module's snapshot: the epoch is the whole of it (no
    files, no stamps); ``chat_size`` is the next row position, what a continuation checks
    for new floors from. Before the first write there is no epoch: nothing may change."""
    return Snapshot(bool(state.epoch), state.epoch, None, None, 0, state.next_pos)


#: the call's first statement (after its pipelined BEGIN): the workspace row (the state the
#: JSONL store's receipt gives), the offset of the chat's first row, the floor's position,
#: and sequential scans off for the rest of the read-only transaction (every query a page
#: issues is an indexed lookup, and the words ranking's per-lexeme scans must stay bitmap
#: scans of the GIN index whatever the statistics say: ``_words.ranked``)
_HEAD = (
    "SELECT w.epoch, w.next_sequence, w.next_pos, w.next_off, w.chat_pos, w.window_id,"
    " w.agent_win, w.derived, (SELECT c.off FROM segue_rows c WHERE c.workspace = %(ws)s"
    " AND c.pos = w.chat_pos), (SELECT max(f.pos) FROM segue_rows f WHERE f.workspace ="
    " %(ws)s AND f.kind = %(floor)s) FROM (SELECT set_config('enable_seqscan', 'off', true),"
    " set_config('work_mem', '32MB', true))"
    " s LEFT JOIN segue_workspaces w ON w.workspace = %(ws)s"
)
_BEGIN = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"


@dataclass(frozen=True)
class CallSnapshot:
    """What a call's first round trip read: the snapshot (its connection, the workspace's
    state) and the floor's position in it."""

    snap: PgSnapshot
    floor: int
    #: a literal search's candidates, looked up in the same round trip (None: not asked)
    literal: lexicon.LitQuery | None = None


@contextmanager
def _call(store: PostgresStore, lookup: lexicon.Lookup | None = None) -> Iterator[CallSnapshot]:
    """One call's REPEATABLE READ, read-only transaction on a reader connection of
    ``store``, opened in one round trip (``BEGIN`` and :data:`_HEAD` in one pipeline, and a
    literal search's vocabulary ``lookup``, which needs nothing the head reads) and ended
    (``ROLLBACK``: it wrote nothing) in one."""
    with translated("cannot read the transcript", store.url):
        conn = store._reader()  # the store's read connections, lent per call
    try:
        with translated("cannot read the transcript", store.url):
            with conn.pipeline():
                conn.execute(_BEGIN)
                cur = conn.execute(_HEAD, {"ws": store.workspace_id, "floor": KIND_FLOOR})
                vocabulary = None
                if lookup is not None and lookup.sql is not None:
                    vocabulary = conn.execute(lookup.sql, lookup.args)
            row = cur.fetchone()
            literal = None if lookup is None else lookup.answer(
                None if vocabulary is None else vocabulary.fetchone()
            )
        assert row is not None  # one row, always (the LEFT JOIN's)
        state = state_of(row[:8] if row[0] is not None else None)
        chat_off = int(row[8]) if row[8] is not None else state.next_off
        floor = int(row[9]) if row[9] is not None else ROOT_POS
        yield CallSnapshot(PgSnapshot(store, conn, state, chat_off), floor, literal)
        # as a COMMIT would: a connection lost by the end of the page fails the call
        with translated("cannot read the transcript", store.url):
            conn.execute("ROLLBACK")
    except BaseException:
        with contextlib.suppress(Exception):  # a broken connection is not reused
            conn.execute("ROLLBACK")
        raise
    finally:
        store._release(conn)


class SqlView:
    """One call's transaction."""

    def __init__(self, call: CallSnapshot, workspace: str) -> None:
        self.snap = snapshot_of(call.snap.state)
        # the page code's context names a layout; nothing of it is read here
        self.layout = Layout(Path(), workspace)
        self._conn = call.snap.conn
        self._workspace = workspace
        self._sql = sql_pages.Sql(call.snap.conn, workspace, call.floor, literal=call.literal)

    def continues(self, state: CursorState) -> bool:
        return state.phase in sql_pages.PHASES and continuation_ok(
            cursor_snapshot(state), self.snap
        )

    def appended(self, ctx: pages.Ctx, state: CursorState) -> tuple[CursorState, bool, bool]:
        # one query sees every row appended since the last page: always complete
        floor = sql_pages.floor_pos(self._conn, self._workspace, state.ce) >= state.ce
        return msgspec.structs.replace(state, ce=self.snap.chat_size), floor, True

    def page(self, ctx: pages.Ctx, state: CursorState | None) -> pages.Page:
        return sql_pages.ACTIONS[ctx.req.action](ctx, self._sql, state)

    def confirm(self) -> None:
        return None  # one transaction: nothing can move under it


class PostgresBackend:
    """Look-back over a workspace kept in PostgreSQL."""

    def __init__(self, store: PostgresStore, *, rederive: bool = True) -> None:
        """``rederive``: derive the agent's columns again when another version of segue
        derived them (a write to the database); without it such a call answers
        ``history_changed`` naming ``segue store init``."""
        self.store = store
        self.workspace_id = store.workspace_id
        self.rederive = rederive
        self.index_problem: str | None = None

    @contextmanager
    def view(self, req: Request | None = None) -> Iterator[SqlView]:
        # a literal search's vocabulary lookup goes in the call's first round trip
        lookup = None
        if req is not None and req.action == "search" and not req.words:
            lookup = lexicon.lookup(self.workspace_id, req.key)
        try:
            with self._derived(lookup) as snap:
                yield SqlView(snap, self.workspace_id)
        except LockTimeout as exc:
            raise pages.PageFailure("history_timeout", exc.message) from None
        except StoreError as exc:
            if exc.code != "store_unavailable":  # the schema, the extension: not a retry
                raise pages.PageFailure("history_changed", exc.message) from None
            raise pages.PageFailure(
                "history_changed", f"the shared store could not be read ({exc.message}); call again"
            ) from None

    @contextmanager
    def _derived(self, lookup: lexicon.Lookup | None = None) -> Iterator[CallSnapshot]:
        """A call's snapshot whose rows' agent columns this code derived (see derive)."""
        for attempt in range(2):
            with _call(self.store, lookup) as call:
                state = call.snap.state
                if state.derived == fingerprint() or state.next_pos == 0:
                    yield call
                    return
            if attempt:  # appended meanwhile by another version of segue
                raise pages.PageFailure(
                    "history_changed",
                    "another version of segue is writing this workspace; call again",
                )
            if not self.rederive:
                raise pages.PageFailure(
                    "history_changed",
                    "the shared store's rows were indexed by another version of segue: "
                    f"run `segue store init {redact(self.store.url)}`, then call again",
                )
            self.store.rederive()

    def after_call(self) -> None:
        return None

    def people_search(self, query: str, *, context: int = 60) -> Iterable[Hit] | None:
        from segue.postgres import _search as pg_search

        with self.store.read_locked():
            try:
                return list(pg_search.search(self.store, query, context=context))
            except pg_search.WalkInstead:
                return None  # the caller walks every row

    def people_words(self, query: str, *, context: int = 60) -> Iterator[Hit]:
        from segue.postgres._people_words import search_words

        return search_words(self.store, query, context=context)
