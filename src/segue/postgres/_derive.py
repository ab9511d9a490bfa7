"""The agent's columns of the PostgreSQL store (``rows.Agent``) for rows already stored:
the schema migration that adds them fills them in, and a workspace whose columns were
derived by another version of the projection code is derived again (I/O).

Every workspace row records in ``derived`` the :func:`fingerprint` of the code its rows'
columns were computed with. An append by a segue whose fingerprint differs marks the
workspace ``''`` (mixed); ``session_history`` answers only from a workspace derived by its
own code, and derives it again otherwise (:func:`rederive`, one transaction under the
workspace's lock), the way the JSONL store's index is rebuilt when it was written by
another version (§7).
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from segue.postgres import _lexicon as lexicon
from segue.postgres._rows import KIND_BOUNDARY, KIND_FLOOR, ROOT_POS, Agent, agent_of, people_of

if TYPE_CHECKING:
    import psycopg

_FETCH = 512
COLUMNS = ("kind", "length", "win", "wid", "wkind", "aid", "rid", "role", "ts", "tools",
            "abody", "risky", "words", "wlen", "mach", "lit", "longtok", "plen", "pwords")
#: The version of what a row's agent columns are (``agent_of`` and the window walk). Bump it
#: when that changes: stored columns of another version are derived again (tests/postgres/
#: test_derived_version.py pins a digest of what a fixed corpus becomes, so a change without
#: a bump fails there). A constant, not a digest of the source: an upgrade that leaves the
#: columns alone re-derives nothing, and two versions sharing a database agree.
#: 2: tool inputs projected as a person reads them (R39); floors exact both ways (R11)
#: 3: each item's words (R39's words search in SQL): ``words``, ``wlen``, ``mach``
#: 4: every row's literal tokens (``lit``, ``longtok``) and the vocabulary (``segue_lex``)
#: 5: people's terms for a person's words search (``plen``, ``pwords``)
#: 6: a word's term is its Porter stem cut to 5 characters (``stem.STEM_CHARS``)
DERIVED_VERSION = 6


def fingerprint() -> str:
    """What the stored columns say they were derived by (``segue_workspaces.derived``)."""
    return f"segue-pg-derived/{DERIVED_VERSION}"


def values(agent: Agent) -> tuple[Any, ...]:
    """The agent's columns in the order of :data:`COLUMNS`."""
    return (agent.kind, agent.length, agent.win, agent.wid, agent.wkind, agent.aid, agent.rid,
            agent.role, agent.ts, agent.tools, agent.abody, agent.risky, agent.words,
            agent.wlen, agent.mach, agent.lit, agent.longtok, agent.plen, agent.pwords)


def window_before(conn: psycopg.Connection[Any], workspace: str, pos: int) -> int:
    """The agent's window open just before ``pos``."""
    got = conn.execute(
        "SELECT win FROM segue_rows WHERE workspace = %s AND pos < %s ORDER BY pos DESC LIMIT 1",
        (workspace, pos),
    ).fetchone()
    return int(got[0]) if got is not None and got[0] is not None else ROOT_POS


def rederive(conn: psycopg.Connection[Any], workspace: str, start: int = 0) -> int:
    """Compute the agent's columns of every row of ``workspace`` from ``start`` on, inside
    the caller's transaction; returns the window open after the last row."""
    win = window_before(conn, workspace, start) if start > 0 else ROOT_POS
    conn.execute(
        "CREATE TEMP TABLE IF NOT EXISTS segue_derive (pos bigint PRIMARY KEY,"
        " kind smallint, length integer, win bigint, wid bytea, wkind text, aid bytea,"
        " rid bytea, role text, ts bigint, tools text, abody text, risky boolean,"
        " words tsvector, wlen integer, mach boolean, lit tsvector, longtok boolean,"
        " plen integer, pwords tsvector)"
        " ON COMMIT DROP"
    )
    cur = conn.cursor(name="segue_derive_rows")
    try:
        cur.execute(
            "SELECT pos, off, raw FROM segue_rows WHERE workspace = %s AND pos >= %s"
            " ORDER BY pos",
            (workspace, start),
        )
        while True:
            chunk = cur.fetchmany(_FETCH)
            if not chunk:
                break
            rows = []
            terms: set[str] = set()
            for pos, off, raw in chunk:
                line = bytes(raw)
                agent = agent_of(line, pos=int(pos), off=int(off), win=win,
                                 people=people_of(line))
                win = agent.win
                terms.update(agent.lex)
                rows.append((int(pos), *values(agent)))
            lexicon.add(conn, workspace, terms)
            with conn.cursor() as c2, c2.copy(
                "COPY segue_derive (pos, " + ", ".join(COLUMNS) + ") FROM STDIN"
            ) as copy:
                for row in rows:
                    copy.write_row(row)
    finally:
        with contextlib.suppress(Exception):
            cur.close()
    assignments = ", ".join(f"{c} = d.{c}" for c in COLUMNS)
    conn.execute(
        f"UPDATE segue_rows r SET {assignments} FROM segue_derive d"  # noqa: S608
        " WHERE r.workspace = %s AND r.pos = d.pos",
        (workspace,),
    )
    conn.execute("DROP TABLE segue_derive")
    # from the first row on, every row is now derived by this code; from a later one, the
    # rows before keep whatever they were derived with
    conn.execute(
        "UPDATE segue_workspaces SET agent_win = %s,"
        " derived = CASE WHEN %s THEN %s ELSE derived END WHERE workspace = %s",
        (win, start == 0, fingerprint(), workspace),
    )
    return win


def rederive_row(conn: psycopg.Connection[Any], workspace: str, pos: int) -> None:
    """The agent's columns of the rewritten row at ``pos`` (a quarantine); when it starts or
    started a window, those of every later row too (their window changed)."""
    got = conn.execute(
        "SELECT off, raw, kind FROM segue_rows WHERE workspace = %s AND pos = %s",
        (workspace, pos),
    ).fetchone()
    if got is None:
        return
    win = window_before(conn, workspace, pos)
    line = bytes(got[1])
    agent = agent_of(line, pos=pos, off=int(got[0]), win=win, people=people_of(line))
    starts = (KIND_BOUNDARY, KIND_FLOOR)
    if agent.kind in starts or got[2] in starts:
        rederive(conn, workspace, pos)
        return
    lexicon.add(conn, workspace, agent.lex)
    assignments = ", ".join(f"{c} = %s" for c in COLUMNS)
    conn.execute(
        f"UPDATE segue_rows SET {assignments} WHERE workspace = %s AND pos = %s",  # noqa: S608
        (*values(agent), workspace, pos),
    )


def stale(conn: psycopg.Connection[Any]) -> list[str]:
    """The workspaces whose rows were derived by other code than this (or a mix)."""
    return [
        str(r[0])
        for r in conn.execute(
            "SELECT workspace FROM segue_workspaces WHERE derived <> %s ORDER BY workspace",
            (fingerprint(),),
        )
    ]


def backfill(conn: psycopg.Connection[Any]) -> None:
    """The migration step that fills the new columns of every workspace."""
    names = [str(r[0]) for r in conn.execute("SELECT workspace FROM segue_workspaces")]
    for workspace in names:
        rederive(conn, workspace)
