"""The PostgreSQL store's append, as statements and pure planning (``postgres`` runs them;
the one-statement append of small batches is ``append_call``).

A batch appended at the end of a workspace's state (:class:`WorkspaceState`, the workspace
row) is planned here without the server: its rows with their derived columns and the state
after it (:func:`plan`). The statements of a large batch, under the lock: the workspace
row's update (:data:`UPDATE`) and the rows through COPY (:func:`copy_rows`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from segue._history.receipt import new_epoch
from segue.postgres._derive import fingerprint
from segue.postgres._rows import ROOT_POS, Prepared, prepare

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
#: batches up to this many rows are appended in one statement (larger ones use COPY)
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
        if p.boundary:
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


def copy_rows(conn: psycopg.Connection[Any], workspace: str, lines: Sequence[Prepared]) -> None:
    """A large batch's rows through one binary COPY."""
    from segue.postgres._bulk import copy_in

    if lines:
        copy_in(conn, workspace, [lines])


__all__ = [
    "PIPELINE_ROWS", "STATE_COLUMNS", "UPDATE", "WorkspaceState", "copy_rows", "plan",
    "state_of", "state_values",
]
