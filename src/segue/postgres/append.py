"""The PostgreSQL store's append, as statements and pure planning (``postgres`` runs them).

A batch appended at the end of a workspace's state (:class:`WorkspaceState`, the workspace
row) is planned here without the server: its rows with their derived columns and the state
after it (:func:`plan`). The statements: the workspace row's update (:data:`UPDATE`), the
same update guarded by the whole state it was planned from (:data:`GUARDED`, which fails,
reading an undefined setting, unless the row still holds that state, and sends the
workspace's ``NOTIFY``), the rows as one multi-row INSERT (:func:`insert_values`) or, for
large batches, COPY (:func:`copy_rows`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from segue.context.boundaries import is_boundary
from segue.history.receipt import new_epoch
from segue.history.scan import MAX_LINE, parse_line
from segue.postgres.derive import COLUMNS, fingerprint, values
from segue.postgres.rows import ROOT_POS, Prepared, prepare

if TYPE_CHECKING:
    import psycopg


@dataclass(frozen=True)
class WorkspaceState:
    epoch: str
    next_sequence: int
    next_pos: int
    next_off: int
    chat_pos: int
    window_id: str
    win: int = ROOT_POS  # the agent's window open at the end (rows.Agent)
    derived: str = ""  # fingerprint of the code the agent's columns come from (derive)


#: the workspace row's columns, in the order of :func:`state_values`
STATE_COLUMNS = (
    "epoch", "next_sequence", "next_pos", "next_off", "chat_pos", "window_id", "agent_win",
    "derived",
)
# (the statements below are built from this module's constants only)
UPDATE = (
    "UPDATE segue_workspaces SET "  # noqa: S608
    + ", ".join(f"{c} = %s" for c in STATE_COLUMNS)
    + " WHERE workspace = %s"
)
#: The guarded append's update: it fails (an undefined setting is read only then)
#: unless the workspace row still holds the state the append was planned from.
GUARDED = (
    "WITH moved AS ("  # noqa: S608
    + UPDATE
    + "".join(f" AND {c} = %s" for c in STATE_COLUMNS)
    + " RETURNING 1) SELECT CASE WHEN count(*) = 1 THEN 1"
    " ELSE current_setting('segue.workspace_moved_on')::int END, pg_notify(%s, '') FROM moved"
)
INSERT = (
    "INSERT INTO segue_rows (workspace, pos, off, raw, seq, item, marker, window_id, body, "  # noqa: S608
    + ", ".join(COLUMNS)
    + ") VALUES "
)
#: batches up to this many rows are appended with one INSERT (larger ones use COPY)
PIPELINE_ROWS = 64


def state_of(row: Any) -> WorkspaceState:
    """A workspace row as :class:`WorkspaceState` (the state before any write when None)."""
    if row is None:
        return WorkspaceState("", 0, 0, 0, 0, "w:0", ROOT_POS, fingerprint())
    seq, pos, off, chat, win = (int(v) for v in (*row[1:5], row[6]))
    return WorkspaceState(str(row[0]), seq, pos, off, chat, str(row[5]), win, str(row[7]))


def plan(
    state: WorkspaceState, raws: Sequence[bytes], *, next_sequence: int
) -> tuple[list[Prepared], WorkspaceState]:
    """What a batch appended at the end of ``state`` stores, and the state after it. A batch
    holding a durable boundary rotates at the newest one, as ``rotation`` does on disk."""
    prepared, window, win = prepare(
        raws, pos=state.next_pos, off=state.next_off, window_id=state.window_id, win=state.win
    )
    chat_pos = state.chat_pos
    for p in prepared:
        row = parse_line(p.raw) if len(p.raw) <= MAX_LINE else None
        if row is not None and is_boundary(row):
            chat_pos = p.pos
    # a rotation is another mutation (R29): a new epoch
    epoch = new_epoch() if chat_pos != state.chat_pos else state.epoch
    end_off = prepared[-1].off + len(prepared[-1].raw) + 1 if prepared else state.next_off
    after = WorkspaceState(
        epoch=epoch,
        next_sequence=max(next_sequence, state.next_sequence),
        next_pos=state.next_pos + len(prepared),
        next_off=end_off,
        chat_pos=chat_pos,
        window_id=window,
        win=win,
        # rows derived by another version of the code than the rows before: mixed
        derived=state.derived if state.derived == fingerprint() else "",
    )
    return list(prepared), after


def state_values(state: WorkspaceState) -> tuple[Any, ...]:
    """``state`` in the order of :data:`STATE_COLUMNS`."""
    return (state.epoch, state.next_sequence, state.next_pos, state.next_off, state.chat_pos,
            state.window_id, state.win, state.derived)


def insert_values(
    conn: psycopg.Connection[Any], workspace: str, lines: Sequence[Prepared]
) -> None:
    """The rows as one multi-row INSERT (one round trip; COPY takes three)."""
    if not lines:
        return
    width = 9 + len(COLUMNS)
    one = "(" + ", ".join(["%s"] * width) + ")"
    params: list[Any] = []
    for p in lines:
        params.extend((workspace, p.pos, p.off, p.raw, p.seq, p.item, p.marker, p.window_id,
                       p.body, *values(p.agent)))
    conn.execute(INSERT + ", ".join([one] * len(lines)), params)


def copy_rows(conn: psycopg.Connection[Any], workspace: str, lines: Sequence[Prepared]) -> None:
    if not lines:
        return
    with conn.cursor() as cur, cur.copy(
        "COPY segue_rows (workspace, pos, off, raw, seq, item, marker, window_id, body, "
        + ", ".join(COLUMNS)
        + ") FROM STDIN"
    ) as copy:
        for p in lines:
            copy.write_row(
                (workspace, p.pos, p.off, p.raw, p.seq, p.item, p.marker, p.window_id, p.body,
                 *values(p.agent))
            )


__all__ = [
    "GUARDED", "INSERT", "PIPELINE_ROWS", "STATE_COLUMNS", "UPDATE", "WorkspaceState",
    "copy_rows", "insert_values", "plan", "state_of", "state_values",
]
