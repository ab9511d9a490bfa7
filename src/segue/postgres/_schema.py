"""The PostgreSQL store's connection, schema and versioned migrations (SPEC.md §8).

psycopg 3 is an optional dependency (``segue[postgres]``): it is imported here, lazily, the
first time a PostgreSQL store is opened, so ``segue --help`` and the JSONL store never load it.

Schema (version :data:`SCHEMA_VERSION`):

* ``segue_schema(version)``: one row, the version the migrations have reached.
* ``segue_workspaces``: one row per workspace: the epoch (R26/R29: kept by a verified append,
  new on every other mutation), the next ``historySequence`` (never lowered, so a hard clear
  never lets a sequence be reused), the next physical position, where ``chat`` starts (rows
  before it are the archive: a rotation moves that mark, it rewrites nothing) and the window
  id rows are being appended into.
* ``segue_rows``: every physical line, oldest first by ``pos``: its exact bytes (``bytea``,
  so invalid UTF-8 and unparseable lines survive), byte offset ``off`` in the history as the
  JSONL files would hold it, its sequence, whether it mentions the reset key, its window id
  and its displayed text for people's search (up to version 4 with a ``pg_trgm`` index).
* version 2 adds what ``session_history`` answers from (``rows.Agent``): each line's kind
  (item, boundary, floor candidate, other), its window, ids, role, tool names and projected
  text (R25) (up to version 4 with its own ``pg_trgm`` index), and per workspace the
  agent's open window and the fingerprint of the code that derived the columns.
* version 3 adds each item's words for R39's words search (``rows.words_of``: a
  ``tsvector`` of the terms the history index's words table holds, with their counts, GIN
  indexed), its number of terms and whether it is a machine note; the GIN indexes keep a
  short pending list (:data:`_PENDING_KB`).
* version 4 adds ``segue_append``, the server-side function that appends a batch in one
  statement (``append_call``), over every column the versions before it made.
* version 5 answers literal search without ``pg_trgm`` (:mod:`segue.postgres._lit`): each
  row's literal tokens (``lit``, a ``tsvector`` with a GIN index; ``longtok``: a token kept
  as windows) and the per-workspace vocabulary ``segue_lex`` (every distinct token, with a
  GIN index over its trigrams, ``segue_grams``); it drops both trigram indexes, creates
  ``segue_append`` again over the new columns, and its last step derives every stored row's
  agent columns (versions 2, 3 and 5) and fills the vocabulary (``derive.backfill``). The
  extension is no longer needed; a database that has it keeps it.
* version 6 creates ``segue_append`` again taking the rows as one binary array per column
  (``tsvector`` values in their binary form, :mod:`segue.postgres._tsv`) instead of one
  JSON array: the server parses neither JSON nor a ``tsvector``'s text. No table changes.
* version 7 adds what a person's ``history search --words`` is answered from without reading
  every row (:mod:`segue.postgres._people_words`): each row's number of people's terms
  (``plen``, with an index that counts them) and the people's terms its ``words`` lack
  (``pwords``, GIN indexed); it creates ``segue_append`` again over the new columns and
  derives every stored row's columns (``derive.backfill``).

Migrations run in one transaction under a global advisory lock, so two first-time processes
never race; each step is recorded, so a later version only runs the steps it lacks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from segue._errors import StoreError, UsageError

if TYPE_CHECKING:
    import psycopg

SCHEMA_VERSION = 7
#: advisory lock key (a constant outside the per-workspace key space's usual range) held
#: while migrating
_MIGRATE_KEY = 0x5E6E_0000

Step = str | Callable[["psycopg.Connection[Any]"], None]


def _backfill(conn: psycopg.Connection[Any]) -> None:
    from segue.postgres._derive import backfill

    backfill(conn)


def _append_function(conn: psycopg.Connection[Any]) -> None:
    from segue.postgres._append_call import create_function

    create_function(conn)


_V1: tuple[Step, ...] = (
    "CREATE TABLE IF NOT EXISTS segue_workspaces ("
    " workspace text PRIMARY KEY,"
    " epoch text NOT NULL,"
    " next_sequence bigint NOT NULL DEFAULT 0,"
    " next_pos bigint NOT NULL DEFAULT 0,"
    " next_off bigint NOT NULL DEFAULT 0,"
    " chat_pos bigint NOT NULL DEFAULT 0,"
    " window_id text NOT NULL DEFAULT 'w:0')",
    "CREATE TABLE IF NOT EXISTS segue_rows ("
    " workspace text NOT NULL REFERENCES segue_workspaces(workspace),"
    " pos bigint NOT NULL,"
    " off bigint NOT NULL,"
    " raw bytea NOT NULL,"
    " seq bigint,"
    " item text,"
    " marker boolean NOT NULL,"
    " window_id text NOT NULL,"
    " body text,"
    " PRIMARY KEY (workspace, pos))",
    "CREATE INDEX IF NOT EXISTS segue_rows_marker ON segue_rows (workspace, pos) WHERE marker",
)

_V2: tuple[Step, ...] = (
    "ALTER TABLE segue_workspaces ADD COLUMN IF NOT EXISTS agent_win bigint NOT NULL"
    " DEFAULT -1",
    "ALTER TABLE segue_workspaces ADD COLUMN IF NOT EXISTS derived text NOT NULL DEFAULT ''",
    "ALTER TABLE segue_rows"
    " ADD COLUMN IF NOT EXISTS kind smallint,"
    " ADD COLUMN IF NOT EXISTS length integer,"
    " ADD COLUMN IF NOT EXISTS win bigint,"
    " ADD COLUMN IF NOT EXISTS wid bytea,"
    " ADD COLUMN IF NOT EXISTS wkind text,"
    " ADD COLUMN IF NOT EXISTS aid bytea,"
    " ADD COLUMN IF NOT EXISTS rid bytea,"
    " ADD COLUMN IF NOT EXISTS role text,"
    " ADD COLUMN IF NOT EXISTS ts bigint,"
    " ADD COLUMN IF NOT EXISTS tools text,"
    " ADD COLUMN IF NOT EXISTS abody text,"
    " ADD COLUMN IF NOT EXISTS risky boolean",
    "CREATE INDEX IF NOT EXISTS segue_rows_kind ON segue_rows (workspace, kind, pos)",
    "CREATE INDEX IF NOT EXISTS segue_rows_win ON segue_rows (workspace, win, pos)"
    " WHERE kind = 0",
    "CREATE INDEX IF NOT EXISTS segue_rows_aid ON segue_rows (workspace, aid) WHERE kind = 0",
    "CREATE INDEX IF NOT EXISTS segue_rows_rid ON segue_rows (workspace, rid) WHERE kind = 0",
    "CREATE INDEX IF NOT EXISTS segue_rows_risky ON segue_rows (workspace, pos) WHERE risky",
    "CREATE INDEX IF NOT EXISTS segue_rows_item ON segue_rows (workspace, item)",
)

#: kB of a GIN index's entries an append may leave unmerged (its pending list), which every
#: search reads through: small, so a search after many appends still costs about a lookup
_PENDING_KB = 256

_V3: tuple[Step, ...] = (
    "ALTER TABLE segue_rows"
    " ADD COLUMN IF NOT EXISTS words tsvector,"
    " ADD COLUMN IF NOT EXISTS wlen integer,"
    " ADD COLUMN IF NOT EXISTS mach boolean",
    "CREATE INDEX IF NOT EXISTS segue_rows_words ON segue_rows USING gin (words)"
    f" WITH (gin_pending_list_limit = {_PENDING_KB})",
)

_V4: tuple[Step, ...] = (_append_function,)

#: the distinct trigrams of a vocabulary term (``lit.grams`` computes the same of a query)
_GRAMS = (
    "CREATE OR REPLACE FUNCTION segue_grams(t text) RETURNS text[]"
    " LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS"
    " $$ SELECT coalesce(array_agg(DISTINCT substr(t, i, 3)), '{}')"
    " FROM generate_series(1, length(t) - 2) AS i $$"
)

_V5: tuple[Step, ...] = (
    "ALTER TABLE segue_rows"
    " ADD COLUMN IF NOT EXISTS lit tsvector,"
    " ADD COLUMN IF NOT EXISTS longtok boolean NOT NULL DEFAULT false",
    # byte order ("C"): a prefix is a range of the primary key
    "CREATE TABLE IF NOT EXISTS segue_lex ("
    " workspace text NOT NULL,"
    ' term text COLLATE "C" NOT NULL,'
    " PRIMARY KEY (workspace, term))",
    _GRAMS,
    "CREATE INDEX IF NOT EXISTS segue_lex_grams ON segue_lex USING gin (segue_grams(term))"
    f" WITH (gin_pending_list_limit = {_PENDING_KB})",
    # every search reads a GIN index's whole pending list (4 MB by default: ~10 ms a query)
    "CREATE INDEX IF NOT EXISTS segue_rows_lit ON segue_rows USING gin (lit)"
    f" WITH (gin_pending_list_limit = {_PENDING_KB})",
    "CREATE INDEX IF NOT EXISTS segue_rows_longtok ON segue_rows (workspace, pos)"
    " WHERE longtok",
    "DROP INDEX IF EXISTS segue_rows_body_trgm",
    "DROP INDEX IF EXISTS segue_rows_abody_trgm",
    "DROP FUNCTION IF EXISTS segue_append",  # its arguments change: not replaced in place
    _append_function,
    _backfill,  # once every column exists
)

_V6: tuple[Step, ...] = (
    "DROP FUNCTION IF EXISTS segue_append",  # its arguments change: not replaced in place
    _append_function,
)

_V7: tuple[Step, ...] = (
    "ALTER TABLE segue_rows"
    " ADD COLUMN IF NOT EXISTS plen integer,"
    " ADD COLUMN IF NOT EXISTS pwords tsvector",
    "CREATE INDEX IF NOT EXISTS segue_rows_pwords ON segue_rows USING gin (pwords)"
    f" WITH (gin_pending_list_limit = {_PENDING_KB})",
    # the statistics of a person's words search: an index-only count of people's items
    "CREATE INDEX IF NOT EXISTS segue_rows_plen ON segue_rows (workspace) INCLUDE (plen)"
    " WHERE plen >= 0",
    # the lines such a search reads whatever the query (rows.PLEN_READ)
    "CREATE INDEX IF NOT EXISTS segue_rows_pread ON segue_rows (workspace, pos)"
    " WHERE plen < 0",
    "DROP FUNCTION IF EXISTS segue_append",  # its arguments change: not replaced in place
    _append_function,
    _backfill,
)

#: version -> steps (statements, or functions of the connection) taking the schema from
#: version-1 to version
MIGRATIONS: dict[int, tuple[Step, ...]] = {
    1: _V1, 2: _V2, 3: _V3, 4: _V4, 5: _V5, 6: _V6, 7: _V7,
}


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError:
        raise UsageError(
            "a postgresql:// store needs psycopg 3: pip install 'segue[postgres]'"
        ) from None
    return psycopg


def is_postgres_url(url: str) -> bool:
    return url.startswith(("postgresql://", "postgres://"))


def connect(url: str, *, timeout: float = 10.0) -> psycopg.Connection[Any]:
    """An autocommit connection, or a one-line :class:`StoreError` naming the server."""
    if not is_postgres_url(url):
        raise UsageError(f"not a PostgreSQL URL: {url!r} (expected postgresql://…)")
    pg = _psycopg()
    try:
        # No server-side prepared statements: they are session state, which PgBouncer in
        # transaction mode does not keep from one transaction to the next.
        conn: psycopg.Connection[Any] = pg.connect(
            url, autocommit=True, connect_timeout=max(1, int(timeout)), prepare_threshold=None
        )
    except pg.Error as exc:
        raise StoreError(
            f"cannot connect to the PostgreSQL store {redact(url)}: {first_line(exc)}",
            code="store_unavailable",
        ) from None
    from segue.postgres._binary import register

    register(conn)
    return conn


def redact(url: str) -> str:
    """The URL without its password, for messages."""
    head, at, tail = url.partition("@")
    if not at or "://" not in head:
        return url
    scheme, _, userinfo = head.partition("://")
    user = userinfo.split(":", 1)[0]
    return f"{scheme}://{user}@{tail}"


def first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


def schema_version(conn: psycopg.Connection[Any]) -> int:
    cur = conn.execute("SELECT to_regclass('segue_schema') IS NOT NULL")
    row = cur.fetchone()
    if row is None or not row[0]:
        return 0
    got = conn.execute("SELECT max(version) FROM segue_schema").fetchone()
    return int(got[0]) if got is not None and got[0] is not None else 0


def ensure_schema(conn: psycopg.Connection[Any]) -> int:
    """Create or migrate the schema; returns the version now in place."""
    if schema_version(conn) == SCHEMA_VERSION:
        return SCHEMA_VERSION
    psycopg = _psycopg()
    try:
        # The lock first, then the transaction: a transaction that began before another
        # process's migration committed may still resolve names as before it (a cached
        # "no such table"), and would migrate a second time, racing the first one's appends.
        conn.execute("SELECT pg_advisory_lock(%s)", (_MIGRATE_KEY,))
        try:
            _migrate(conn)
        finally:
            if not conn.broken:
                conn.execute("SELECT pg_advisory_unlock(%s)", (_MIGRATE_KEY,))
    except psycopg.Error as exc:
        raise StoreError(
            f"cannot create the segue schema in PostgreSQL: {first_line(exc)}",
            code="schema_failed",
        ) from None
    return SCHEMA_VERSION


def _migrate(conn: psycopg.Connection[Any]) -> None:
    """The steps this database lacks, in one transaction (the caller holds the lock)."""
    with conn.transaction():
        have = schema_version(conn)
        if have == SCHEMA_VERSION:  # another process migrated while we waited
            return
        if have > SCHEMA_VERSION:
            raise StoreError(
                f"the PostgreSQL store has schema version {have}; this segue knows up to "
                f"{SCHEMA_VERSION}: upgrade segue",
                code="schema_too_new",
            )
        conn.execute("CREATE TABLE IF NOT EXISTS segue_schema (version integer NOT NULL)")
        for version in range(have + 1, SCHEMA_VERSION + 1):
            for step in MIGRATIONS[version]:
                if isinstance(step, str):
                    conn.execute(step)
                else:
                    step(conn)
            conn.execute("INSERT INTO segue_schema (version) VALUES (%s)", (version,))


@contextmanager
def translated(what: str, url: str) -> Iterator[None]:
    """Turn a psycopg failure inside the block into one clear :class:`StoreError`."""
    psycopg = _psycopg()
    try:
        yield
    except psycopg.OperationalError as exc:
        raise StoreError(
            f"{what}: lost the connection to the PostgreSQL store {redact(url)} "
            f"({first_line(exc)}); the operation was not confirmed (it is whole or absent)",
            code="store_unavailable",
        ) from None
    except psycopg.Error as exc:
        raise StoreError(f"{what}: PostgreSQL said: {first_line(exc)}") from None

