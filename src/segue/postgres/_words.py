"""R39's words search in SQL over the PostgreSQL store's ``words`` column.

Every item row holds its terms (``rows.words_of``): those of
:func:`segue._retrieval.words.terms`, which the history index's FTS5 words table and the
bounded scan find items by too, so the three agree on what a word is (segue's own code-aware
analysis: identifiers whole and by parts, paths, stems, case folding). Each term is a lexeme
of a ``tsvector`` (``rows.lexeme``: the index's token spelling), and so is each set bit of
its count beyond one; the column has a GIN index.

* **Candidates**: the items whose vector holds any of the query's terms (``@@`` an OR
  ``tsquery``), and the ``risky`` ones (a text whose vector could not be stored, or that
  holds a lone surrogate), which are always candidates. Each candidate is confirmed on its
  row read again with :func:`segue._retrieval.ranking.words_finder`, as on the other
  backends, so a hash collision of two tokens finds nothing more.
* **Ranking**: BM25 computed in SQL from the GIN index alone (a vector is never read: one
  bitmap scan per query term and count bit, each returning positions), with the constants of
  :mod:`segue._retrieval.words` (k1 1.2, b 0.75) and the bounded scan's "plus one" idf
  (the SQLite index ranks with FTS5's own ``bm25()``, whose idf has no "plus one" and whose
  N and average length are over the whole table, so the two may order the same hits
  differently; R39 asks the same order of literal searches only): a term's
  count in an item is 1 + the bits found (up to ``rows.MAX_COUNT``); its document frequency
  the number of items above the floor holding it; N the number of rows above the floor (at
  least the items matched); the average length that of the items matched (each once per
  query term it holds). Machine-authored notes are weighed down by
  :data:`segue._retrieval.ranking.MACHINE_WEIGHT`, the filters (R36) apply after the
  statistics, as they do to FTS5's, and then a hit gains
  :data:`~segue._retrieval.ranking.NEIGHBOUR_SHARE` of the score of the hit of the search on
  the line just before it (``pos`` numbers lines); ties go to the newer item.
  The statement aggregates once per item (each term's count a filtered aggregate), then
  once over the items (N, each term's frequency, the average length); its float
  operations are those of one row per item and term, in term order, so the scores (and
  their ties) do not depend on the shape of the plan.

SQL text is put together only from fixed fragments; every value is a bound parameter.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from segue._retrieval.ranking import MACHINE_WEIGHT, NEIGHBOUR_SHARE
from segue._retrieval.words import BM25_B, BM25_K1, query_terms
from segue.postgres._rows import COUNT_BITS, lexeme

#: runs a statement with named parameters in the call's transaction: its rows
Query = Callable[[str, dict[str, Any]], list[tuple[Any, ...]]]
#: the query terms ranked (the first ones); a longer query still finds items by every term
MAX_TERMS = 12


def tokens(query: str) -> list[str]:
    """The lexemes of the query's terms (:func:`segue._retrieval.words.query_terms`: stop
    words dropped as on the other backends), in first-seen order; [] when it has none."""
    return list(dict.fromkeys(lexeme(t) for t in query_terms(query)))


def tsquery(tokens: list[str]) -> str:
    """The ``tsquery`` of items holding any of ``tokens`` (never empty)."""
    return " | ".join(tokens)


def ranked(
    query: Query,
    workspace: str,
    found: list[str],
    *,
    floor: int,
    below: int,
    rows_above: int,
    role: str | None,
    tools: str | None,
    limit: int,
    then: tuple[str, dict[str, Any]] = ("", {}),
) -> tuple[tuple[int, ...], bool, list[tuple[Any, ...]]]:
    """Positions of the best ``limit`` items above ``floor`` and below ``below`` for the
    query's tokens ``found``, best first, of the given ``role`` and holding the tool name
    ``tools`` (its column's spelling) when they are not None; and whether they are every
    candidate there is (fewer than ``limit``, every token ranked, no ``risky`` row); and the
    rows of ``then``, a join (its SQL and named parameters) on ``top``, whose column ``best``
    holds the ranked positions, in the same statement (the first ranked rows, say).

    The items holding a lexeme come from a subquery planned on its own (``OFFSET 0``), run
    once per lexeme; with sequential scans off in the caller's transaction
    (``_backend._HEAD``), the plan is a bitmap scan of the GIN index per lexeme whatever
    the statistics say (a sequential scan, or the join taken the other way round, would
    read every row's vector)."""
    terms = found[:MAX_TERMS]
    params: dict[str, Any] = {
        "ws": workspace, "lo": floor, "hi": below, "limit": limit, "mach": MACHINE_WEIGHT,
        "n": rows_above, "role": role, "tools": tools, "share": NEIGHBOUR_SHARE,
    }
    lexemes: list[str] = []
    term: list[int] = []
    weight: list[int] = []
    for i, token in enumerate(terms):  # the term itself (weight 0), then its count's bits
        for k, spelled in enumerate([token, *(f"{token}{k}" for k in range(COUNT_BITS))]):
            lexemes.append(spelled)
            term.append(i)
            weight.append(0 if k == 0 else 1 << (k - 1))
    params.update(lex=lexemes, term=term, weight=weight)
    having = ""
    # the filters' columns (only those asked for: each is one more aggregate per hit)
    wanted = [c for c, v in (("role", role), ("tools", tools)) if v is not None]
    if role is not None:
        having += " AND p.role = %(role)s"
    if tools is not None:
        having += " AND strpos(p.tools, %(tools)s) > 0"
    picked = "".join(f", CASE WHEN x.w = 0 THEN r.{c} END AS {c}" for c in wanted)
    taken = "".join(f", r.{c}" for c in wanted)
    kept = "".join(f", max({c}) AS {c}" for c in wanted)
    k1, b = BM25_K1, BM25_B
    held = range(len(terms))
    # per item, for each query term i: its count (f<i>, NULL when the item lacks it)
    counts = "".join(f", (1 + sum(w) FILTER (WHERE t = {i}))::float8 AS f{i}" for i in held)
    # per query term: its document frequency (d<i>)
    freqs = "".join(f", count(f{i})::float8 AS d{i}" for i in held)
    nulls = ", ".join(f"f{i}" for i in held)
    # each term's BM25 weight in the item, added in term order (an absent one adds 0): the
    # same operations as one row per item and term would take, its idf and length norm
    # computed once (i<i>, p.norm)
    idf = "".join(f", ln(1 + (n - d{i} + 0.5) / (d{i} + 0.5)) AS i{i}" for i in held)
    score = " + ".join(
        f"coalesce(s.i{i} * p.f{i} * {k1 + 1.0!r} / (p.f{i} + p.norm), 0)" for i in held
    )
    sql = (
        # one bitmap scan of the GIN index per lexeme: the items holding it (the item's
        # columns from the term's own lexeme, the count's bits give only their weight)
        f"WITH h AS (SELECT x.t, x.w, r.pos, r.wlen, r.mach{taken}"  # noqa: S608
        " FROM unnest(%(lex)s::text[], %(term)s::int[], %(weight)s::int[]) AS x(lex, t, w)"
        " CROSS JOIN LATERAL (SELECT r.pos, CASE WHEN x.w = 0 THEN r.wlen END AS wlen,"
        f" CASE WHEN x.w = 0 THEN r.mach END AS mach{picked} FROM segue_rows r"
        " WHERE r.workspace = %(ws)s AND r.kind = 0 AND r.pos > %(lo)s AND r.pos < %(hi)s"
        " AND r.words @@ x.lex::tsquery OFFSET 0) r),"  # planned on its own: per lexeme
        # per item: its columns and each term's count, in one pass
        " p AS MATERIALIZED (SELECT pos, max(wlen) AS wlen, bool_or(mach) AS mach"
        f"{kept}{counts} FROM h GROUP BY pos),"
        # N (at least the items matched), each term's frequency, and the average length
        # of the items matched, each once per query term it holds (the mean of integers)
        f" c AS (SELECT greatest(%(n)s, count(*))::float8 AS n{freqs},"
        f" greatest(sum(wlen::int8 * num_nonnulls({nulls})) / nullif(sum(num_nonnulls("
        f"{nulls})) FILTER (WHERE wlen IS NOT NULL), 0), 1)::float8 AS dl FROM p),"
        f" s AS (SELECT c.*{idf} FROM c),"
        # each hit of the search (the filters hold) and its score
        f" q AS MATERIALIZED (SELECT p.pos, ({score})"
        " * (CASE WHEN p.mach THEN %(mach)s ELSE 1.0 END) AS sc FROM (SELECT p.*,"
        f" {k1!r} * (1 - {b!r} + {b!r} * p.wlen::float8 / s.dl) AS norm FROM p CROSS JOIN s)"
        f" p CROSS JOIN s WHERE true{having}),"
        # each gains a share of the score of the hit on the line just before it
        " top AS MATERIALIZED (SELECT ARRAY(SELECT q.pos FROM q LEFT JOIN q AS b"
        " ON b.pos = q.pos - 1 ORDER BY q.sc + %(share)s * coalesce(b.sc, 0) DESC,"
        " q.pos DESC LIMIT %(limit)s) AS best, EXISTS (SELECT 1 FROM segue_rows r"
        " WHERE r.workspace = %(ws)s AND r.risky AND r.kind = 0 AND r.pos > %(lo)s"
        " AND r.pos < %(hi)s) AS risky)"
        f" SELECT top.best, top.risky{', a.*' if then[0] else ''} FROM top{then[0]}"
    )
    got = query(sql, {**params, **then[1]})  # one row at least, always
    best = tuple(int(p) for p in got[0][0])
    rows = [row[2:] for row in got if len(row) > 2 and row[2] is not None]
    every = len(best) < limit and len(found) <= MAX_TERMS and not got[0][1]
    return best, every, rows
