"""R39's words search in SQL over the PostgreSQL store's ``words`` column.

Every item row holds its terms (``rows.words_of``): the tokens of
:func:`segue.retrieval.ranking.index_terms`, the very tokens the history index's FTS5 words
table holds, so PostgreSQL, the index and the bounded scan agree on what a word is (segue's
own code-aware analysis: identifiers whole and by parts, paths, stems, case folding). Each
token is a lexeme of a ``tsvector`` with positions 1..its count; the column has a GIN index.

* **Candidates**: the items whose vector holds any of the query's terms (``@@`` an OR
  ``tsquery``), and the ``risky`` ones (a text whose vector could not be stored, or that
  holds a lone surrogate), which are always candidates. Each candidate is confirmed on its
  row read again with :func:`segue.retrieval.ranking.words_finder`, as on the other
  backends, so a hash collision of two tokens finds nothing more.
* **Ranking**: BM25 computed in SQL, with the constants of
  :mod:`segue.retrieval.words` (k1 1.2, b 0.75) and the index's "plus one" idf: a term's
  count in an item is ``ts_rank_cd`` with unit weights of the one-term query (one cover per
  position); its document frequency is the number of the query's matches above the floor
  holding it (a window aggregate of the same scan); N is the number of rows above the floor;
  the average length is that of the matches. Machine-authored notes are weighed down by
  :data:`segue.retrieval.ranking.MACHINE_WEIGHT`, ties go to the newer item, and the filters
  (R36) apply after the statistics, as they do to FTS5's.

SQL text is put together only from fixed fragments (one per query term); every value is a
bound parameter.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from segue.retrieval.ranking import MACHINE_WEIGHT, index_query
from segue.retrieval.words import BM25_B, BM25_K1

if TYPE_CHECKING:
    import psycopg

#: the query terms ranked; a longer query is still matched by all of its terms
MAX_TERMS = 32


def tokens(query: str) -> list[str]:
    """The words table's tokens of the query's terms (stop words dropped as on the other
    backends), in first-seen order; [] when it has none."""
    match = index_query(query)
    return [] if match is None else [t.strip('"') for t in match.split(" OR ")]


def tsquery(tokens: list[str]) -> str:
    """The ``tsquery`` of items holding any of ``tokens`` (never empty)."""
    return " | ".join(tokens)


def ranked(
    conn: psycopg.Connection[Any],
    workspace: str,
    found: list[str],
    *,
    floor: int,
    below: int,
    rows_above: int,
    role: str | None,
    tools: str | None,
    limit: int,
) -> tuple[int, ...]:
    """Positions of the best ``limit`` items above ``floor`` and below ``below`` for the
    query's tokens ``found``, best first, of the given ``role`` and holding the tool name
    ``tools`` (its column's spelling) when they are not None."""
    terms = found[:MAX_TERMS]
    counts = ", ".join(
        f"ts_rank_cd('{{1,1,1,1}}', r.words, %(t{i})s::tsquery)::float8 AS f{i}"
        for i in range(len(terms))
    )
    freqs = ", ".join(
        f"(count(*) FILTER (WHERE f{i} > 0) OVER ())::float8 AS d{i}" for i in range(len(terms))
    )
    norm = f"{BM25_K1!r} * (1 - {BM25_B!r} + {BM25_B!r} * s.wlen / greatest(s.dl, 1))"
    score = " + ".join(
        f"ln(1 + (s.n - s.d{i} + 0.5) / (s.d{i} + 0.5)) * s.f{i} * {BM25_K1 + 1.0!r}"
        f" / (s.f{i} + {norm})"
        for i in range(len(terms))
    )
    where = ""
    if role is not None:
        where += " AND s.role = %(role)s"
    if tools is not None:
        where += " AND strpos(s.tools, %(tools)s) > 0"
    params: dict[str, Any] = {f"t{i}": t for i, t in enumerate(terms)}
    params.update(ws=workspace, q=tsquery(found), lo=floor, hi=below, limit=limit,
                  mach=MACHINE_WEIGHT, n=rows_above, role=role, tools=tools)
    sql = (
        "WITH c AS (SELECT r.pos, r.wlen, r.mach, r.role, r.tools, "  # noqa: S608
        f"{counts} FROM segue_rows r WHERE r.workspace = %(ws)s AND r.kind = 0"
        " AND r.pos > %(lo)s AND r.pos < %(hi)s AND r.words @@ %(q)s::tsquery),"
        f" s AS (SELECT c.*, {freqs}, (avg(c.wlen) OVER ())::float8 AS dl,"
        " greatest(%(n)s, count(*) OVER ())::float8 AS n FROM c)"
        f" SELECT s.pos FROM s WHERE true{where}"
        f" ORDER BY ({score}) * (CASE WHEN s.mach THEN %(mach)s ELSE 1.0 END) DESC,"
        " s.pos DESC LIMIT %(limit)s"
    )
    return tuple(int(r[0]) for r in conn.execute(sql, params).fetchall())
