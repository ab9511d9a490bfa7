"""The literal search's vocabulary in SQL (``segue_lex``, see :mod:`segue.postgres._lit`):
adding a batch's lexemes, and turning a literal query into the ``tsquery`` of its candidate
rows, as ``retrieval.index_query`` does over the history index's ``lex`` and ``lexgrams``.

The vocabulary only grows: a lexeme no row holds any more costs a candidate term, never an
answer, and no writer has to know what another one removed. Every statement names one
workspace.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from segue._retrieval.index_literal import Need, Piece, pieces
from segue.postgres._lit import grams, long_piece, tsquery
from segue.postgres._rows import Prepared, like_pattern

if TYPE_CHECKING:
    import psycopg

#: lexemes one piece may stand for (more narrows too little: the piece is left out)
MAX_TERMS = 256
#: trigram matches examined for one suffix or inside piece before it counts as too common
MAX_GRAM_ROWS = 8 * MAX_TERMS

ADD = (
    "INSERT INTO segue_lex (workspace, term) SELECT %s, unnest(%s::text[])"
    " ON CONFLICT DO NOTHING"
)


def add(conn: psycopg.Connection[Any], workspace: str, terms: Iterable[str]) -> None:
    """Put ``terms`` in ``workspace``'s vocabulary (those it lacks)."""
    found = list(terms)
    if found:
        conn.execute(ADD, (workspace, found))


@dataclass(frozen=True)
class LitQuery:
    """What a literal query asks of the rows: ``match`` the ``tsquery`` every non-risky
    candidate's ``lit`` satisfies ("" no row's can; None no piece narrows: every row is a
    candidate), ``long``: the ``longtok`` rows are candidates too."""

    match: str | None
    long: bool


def _lookup(workspace: str, piece: Piece) -> tuple[str, list[Any]] | None:
    """The SQL expression (and its parameters) of the lexemes the piece picks out: an array,
    NULL when there are too many to use; None when the piece has nothing to look up (inside
    or at the end of a token, under three characters: no trigram)."""
    text = piece.text
    if piece.need is Need.EXACT:
        return ("(SELECT coalesce(array_agg(term), '{}') FROM segue_lex"
                " WHERE workspace = %s AND term = %s)", [workspace, text])
    if piece.need is Need.PREFIX:
        upper = text[:-1] + chr(ord(text[-1]) + 1)  # ASCII letters and digits: no overflow
        return ("(SELECT CASE WHEN count(*) > %s THEN NULL ELSE coalesce(array_agg(term), '{}')"
                " END FROM (SELECT term FROM segue_lex WHERE workspace = %s AND term >= %s"
                " AND term < %s LIMIT %s) g)", [MAX_TERMS, workspace, text, upper, MAX_TERMS + 1])
    if len(text) < 3:
        return None
    # a piece holds only ASCII letters and digits: no LIKE wildcard to escape; byte order
    pattern = "%" + text if piece.need is Need.SUFFIX else "%" + text + "%"
    return ("(SELECT CASE WHEN count(*) > %s THEN NULL ELSE coalesce(array_agg(term)"
            " FILTER (WHERE term LIKE %s), '{}') END FROM (SELECT term FROM segue_lex"
            " WHERE workspace = %s AND segue_grams(term) @> %s::text[] LIMIT %s) g)",
            [MAX_GRAM_ROWS, pattern, workspace, grams(text), MAX_GRAM_ROWS + 1])


@dataclass(frozen=True)
class Lookup:
    """The statement that looks a literal query's pieces up (``sql`` None: no piece has
    anything to look up), its parameters, and whether the long-token rows are candidates."""

    sql: str | None
    args: list[Any]
    long: bool

    def answer(self, row: tuple[Any, ...] | None) -> LitQuery:
        """The :class:`LitQuery` from the statement's row (None when there is none)."""
        return _answer(row, self.long)


def lookup(workspace: str, query: str) -> Lookup:
    """How :func:`literal` looks ``query`` up in ``workspace``: one statement, the lexemes of
    every piece at once (a caller may send it along with others, in one round trip)."""
    asked = list(dict.fromkeys(pieces(query)))
    long = long_piece(asked)
    parts = [got for got in (_lookup(workspace, p) for p in asked) if got is not None]
    if not parts:
        return Lookup(None, [], long)
    sql = "SELECT " + ", ".join(expr for expr, _ in parts)
    return Lookup(sql, [v for _, args in parts for v in args], long)


def literal(conn: psycopg.Connection[Any], workspace: str, query: str) -> LitQuery:
    """The candidates of the literal ``query`` in ``workspace`` (:class:`LitQuery`), looked
    up in one statement: the lexemes of every piece at once."""
    found = lookup(workspace, query)
    if found.sql is None:
        return found.answer(None)
    return found.answer(conn.execute(found.sql, found.args).fetchone())


def _answer(row: tuple[Any, ...] | None, long: bool) -> LitQuery:
    groups: list[list[str]] = []
    for terms in row or ():
        if terms is None or len(terms) > MAX_TERMS:
            continue  # narrows too little to be worth its lookup
        if not terms:
            return LitQuery("", long)
        groups.append([str(t) for t in terms])
    return LitQuery(tsquery(groups) if groups else None, long)


def condition(q: LitQuery, alias: str = "r") -> tuple[str, list[Any]]:
    """The SQL condition (and its parameters) of a :class:`LitQuery` whose ``match`` is not
    None: the rows holding it, the risky rows and, when asked, the long-token rows."""
    extra = f" OR {alias}.longtok" if q.long else ""
    if not q.match:
        return f"({alias}.risky{extra})", []
    return f"({alias}.lit @@ %s::tsquery OR {alias}.risky{extra})", [q.match]


def people_where(
    conn: psycopg.Connection[Any], workspace: str, query: str
) -> tuple[str, tuple[Any, ...]]:
    """The condition on ``segue_rows`` (unaliased) of the lines people's search confirms:
    those whose tokens may hold ``query``, or when no piece of it narrows the search, those
    whose ``body`` holds it, tested by the server."""
    found = literal(conn, workspace, query)
    if found.match is None:
        return r"body LIKE %s ESCAPE '\'", (like_pattern(query),)
    cond, args = condition(found, "segue_rows")
    return "body IS NOT NULL AND " + cond, tuple(args)


class Committed:
    """The literal tokens one store's commits put in its workspace's vocabulary, which never
    loses one: a later batch sends only the others (bounded: forgotten when full).
    :meth:`fresh` gives a batch's new tokens; :meth:`sent` records them once the call
    stored the batch (``committed``: in its own transaction, else at :meth:`committed`,
    when the caller's transaction has)."""

    MAX = 1 << 17

    def __init__(self) -> None:
        self._known: set[str] = set()
        self._asked: list[str] = []
        self._pending: list[str] = []

    def fresh(self, prepared: Iterable[Prepared]) -> list[str]:
        if len(self._known) > self.MAX:
            self._known.clear()
        self._pending = []
        self._asked = list(frozenset().union(*(p.agent.lex for p in prepared)) - self._known)
        return self._asked

    def sent(self, *, committed: bool) -> None:
        if committed:
            self._known.update(self._asked)
        else:
            self._pending = self._asked

    def committed(self) -> None:
        self._known.update(self._pending)
        self._pending = []


__all__ = [
    "ADD", "MAX_TERMS", "Committed", "LitQuery", "Lookup", "add", "condition", "literal",
    "lookup", "people_where",
]
