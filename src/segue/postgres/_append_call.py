"""The append as one statement: a server-side function, ``segue_append``, does what the
guarded append's statements did (SPEC.md §8), so a batch costs one round trip and one
implicit transaction.

The function, in this order and in the statement's own transaction: takes the workspace's
advisory lock (unless the caller's :meth:`PostgresStore.locked` holder has it) with the
store's lock timeout (a setting of this transaction only); updates the workspace row from
the state the batch was planned from to the state after it, guarded by that whole state;
and only when the guard held inserts the rows (one binary array of ``segue_rows``
records), adds their literal tokens
to the vocabulary (``segue_lex``, :mod:`segue.postgres._lexicon`) and sends the workspace's
``NOTIFY``. When the guard fails (another client moved the workspace on, or it
has no row yet: then it creates it) nothing is written and it returns the workspace's
state as read under the lock, which the caller plans the batch again from; on success it
returns a row of NULLs. Plans stay cached inside the server's session, invisible to the
client, so nothing outlives the transaction that a pooler (PgBouncer, transaction mode)
would have to keep.

Created by the schema migration (:func:`create_function`) from :data:`bulk.COLUMN_TYPES`;
a migration that changes ``segue_rows``' columns runs it again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from segue.postgres._append import STATE_COLUMNS, WorkspaceState, state_of, state_values
from segue.postgres._binary import RowType, records
from segue.postgres._binary import row_type as _row_type
from segue.postgres._bulk import COLUMN_TYPES, COPY_COLUMNS, row_values
from segue.postgres._rows import Prepared

if TYPE_CHECKING:
    import psycopg

_STATE_TYPES = {
    "epoch": "text", "next_sequence": "bigint", "next_pos": "bigint", "next_off": "bigint",
    "chat_pos": "bigint", "window_id": "text", "agent_win": "bigint", "derived": "text",
}
_HEAD = (("ws", "text"), ("lock_key", "bigint"), ("lock_timeout", "text"),
         ("channel", "text"), ("fresh_epoch", "text"), ("fresh_derived", "text"))
#: the rows travel as one array of ``segue_rows`` records in binary (``tsvector`` values
#: in the type's own binary form, :mod:`segue.postgres._binary`): the server parses
#: neither JSON nor a ``tsvector``'s text, and the client quotes and escapes nothing
_ARGS: tuple[tuple[str, str], ...] = (
    *_HEAD,
    *((f"o_{c}", _STATE_TYPES[c]) for c in STATE_COLUMNS),
    *((f"n_{c}", _STATE_TYPES[c]) for c in STATE_COLUMNS),
    ("batch", "segue_rows[]"),
    ("lex", "text[]"),
)


def function_ddl(*, lz4: bool = False) -> str:
    """``CREATE OR REPLACE FUNCTION segue_append(…)`` for the columns of this code (built
    from this package's constants only); ``lz4``: long values are compressed with lz4 (the
    server has it), a setting of the call's transaction only."""
    args = ", ".join(f"{name} {typ}" for name, typ in _ARGS)
    sets = ", ".join(f"{c} = n_{c}" for c in STATE_COLUMNS)
    guard = " AND ".join(f"{c} = o_{c}" for c in STATE_COLUMNS)
    cols = ", ".join(COPY_COLUMNS)
    # the rows' workspace is the function's argument (the records' own is left NULL)
    picked = ", ".join(f"r.{c}" for c in COPY_COLUMNS[1:])
    return (
        f"CREATE OR REPLACE FUNCTION segue_append({args}) RETURNS segue_workspaces"  # noqa: S608
        " LANGUAGE plpgsql AS $fn$\n"
        "DECLARE\n  found_state segue_workspaces;\n"
        "BEGIN\n"
        + ("  PERFORM set_config('default_toast_compression', 'lz4', true);\n" if lz4 else "")
        + "  IF lock_key IS NOT NULL THEN\n"  # noqa: S608
        "    PERFORM set_config('lock_timeout', lock_timeout, true);\n"
        "    PERFORM pg_advisory_xact_lock(lock_key);\n"
        "  END IF;\n"
        f"  UPDATE segue_workspaces SET {sets} WHERE workspace = ws AND {guard};\n"
        "  IF FOUND THEN\n"
        f"    INSERT INTO segue_rows ({cols}) SELECT ws, {picked} FROM unnest(batch) AS r;\n"
        "    IF cardinality(lex) > 0 THEN\n"
        "      INSERT INTO segue_lex (workspace, term) SELECT ws, unnest(lex)"
        " ON CONFLICT DO NOTHING;\n"
        "    END IF;\n"
        "    PERFORM pg_notify(channel, '');\n"
        "    RETURN NULL;\n"
        "  END IF;\n"
        "  INSERT INTO segue_workspaces (workspace, epoch, derived)"
        " VALUES (ws, fresh_epoch, fresh_derived) ON CONFLICT (workspace) DO NOTHING;\n"
        "  SELECT * INTO found_state FROM segue_workspaces WHERE workspace = ws;\n"
        "  RETURN found_state;\n"
        "END\n$fn$"
    )


def create_function(conn: psycopg.Connection[Any]) -> None:
    """The migration step: (re)create ``segue_append``."""
    got = conn.execute(
        "SELECT 'lz4' = ANY(enumvals) FROM pg_settings WHERE name = 'default_toast_compression'"
    ).fetchone()
    conn.execute(function_ddl(lz4=bool(got and got[0])))


#: the call; every argument cast to its type (a list of Python ints is no bigint[] else),
#: the batch sent in binary (``%b``)
CALL = (
    "SELECT " + ", ".join(STATE_COLUMNS) + " FROM segue_append("  # noqa: S608
    + ", ".join(f"%{'b' if name == 'batch' else 's'}::{typ}" for name, typ in _ARGS)
    + ")"
)


def call_params(
    workspace: str,
    kind: RowType,
    *,
    lock_key: int | None,
    lock_timeout_ms: int,
    channel: str,
    fresh_epoch: str,
    fresh_derived: str,
    known: WorkspaceState,
    after: WorkspaceState,
    lines: Sequence[Prepared],
    lex: Sequence[str],
) -> tuple[Any, ...]:
    """The arguments of :data:`CALL` for a batch planned from ``known`` to ``after``;
    ``lex``: the literal tokens to add to the vocabulary (those of ``lines`` the caller has
    not seen committed)."""
    return (
        workspace, lock_key, f"{lock_timeout_ms}ms", channel, fresh_epoch, fresh_derived,
        *state_values(known), *state_values(after),
        records(kind, [row_values(None, p) for p in lines]), list(lex),
    )


def row_type(conn: psycopg.Connection[Any]) -> RowType:
    """``segue_rows``' record type, for :func:`call_params` (read once per store)."""
    return _row_type(conn, "segue_rows", COPY_COLUMNS, COLUMN_TYPES)


def call_append(conn: psycopg.Connection[Any], params: Sequence[Any]) -> WorkspaceState | None:
    """One ``segue_append`` call: None when the batch was stored, else the workspace's state
    (nothing was written)."""
    got = conn.execute(CALL, params).fetchone()
    return None if got is None or got[0] is None else state_of(got)


__all__ = [
    "CALL", "call_append", "call_params", "create_function", "function_ddl", "row_type",
]
