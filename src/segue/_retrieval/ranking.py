"""What a search hit is, for either ``match`` (R23, R39), and how a page's hits are ranked.
Pure.

* ``literal``: the query as a case-insensitive substring
  (:func:`segue._retrieval.matching.matcher`).
* ``words``: an item holding any of the query's terms (:func:`segue._retrieval.words.terms`:
  case-folded, stemmed, identifiers whole and by parts). Its snippet is centred on the best
  passage, where most of the query's words meet (:func:`segue._retrieval.words.best_passage`).
  A hit ranks by its BM25 score, machine notes weighed down (:data:`MACHINE_WEIGHT`), plus
  :data:`NEIGHBOUR_SHARE` of the score of the hit on the line just before it, when that line
  is a hit of the same search: an answer often stands right after the question or remark
  that holds the words ("what's her name?" — "Biscuit"). Only a hit gains, so what is a hit
  does not change.

Every backend asks this module whether an item is a hit, so a words search finds exactly the
same items on the scan, the index and PostgreSQL; only the order of a relevance page may
differ (the scan ranks within each page it reads, R39).
"""

from __future__ import annotations

import base64
import functools
import hashlib
from collections.abc import Callable, Sequence

from segue._retrieval.matching import matcher
from segue._retrieval.words import PageScorer, best_passage, holds_any, query_terms, terms

Finder = Callable[[str], tuple[int, int] | None]

#: a machine-authored note (a budget warning) weighs this much of people's and model text
MACHINE_WEIGHT = 0.25
#: a hit gains this much of the score of the hit on the line just before it (measured on
#: ``bench.bench_lookback_conversations`` and ``bench.bench_lookback_quality``)
NEIGHBOUR_SHARE = 0.3
#: the narrowest snippet a page cuts (page_entries.SNIPPET_CHARS): the span a finder returns
_CORE = 48


def finder(query: str, match: str, max_chars: int) -> Finder:
    """``text`` → the span a snippet centres on, or None when ``text`` is not a hit."""
    if match == "literal":
        return matcher(query)
    return words_finder(query, max_chars)


def words_finder(query: str, max_chars: int) -> Finder:
    wanted = list(dict.fromkeys(query_terms(query)))

    def find(text: str) -> tuple[int, int] | None:
        if not holds_any(text, wanted):
            return None
        start, end = best_passage(text, query, max_chars)
        # the passage's middle, as wide as the narrowest snippet: every snippet size a page
        # tries (up to max_chars) is then centred on where the words meet
        core = min(_CORE, max_chars, end - start)
        mid = (start + end) // 2
        lo = max(0, min(mid - core // 2, len(text) - core))
        return lo, lo + core

    return find


#: a hit a scan page read: its text, machine-authored, its line's start and end (or None)
PageText = tuple[str, bool, int | None, int | None]


def rank(query: str, docs: Sequence[PageText]) -> list[int]:
    """Indices of ``docs`` best first (BM25 over this page, the exact phrase highest, machine
    notes weighed down, :func:`with_neighbours` where a doc's line starts where another's
    ends); ties keep the given order (newest first)."""
    if not docs:
        return []
    weights = [MACHINE_WEIGHT if d[1] else 1.0 for d in docs]
    scores = PageScorer([d[0] for d in docs], weights=weights).scores(query)
    ends = {d[3]: i for i, d in enumerate(docs) if d[3] is not None}
    scores = with_neighbours(scores, [None if d[2] is None else ends.get(d[2]) for d in docs])
    return sorted(range(len(docs)), key=lambda i: -scores[i])


def with_neighbours(scores: Sequence[float], before: Sequence[int | None]) -> list[float]:
    """Each hit's score plus :data:`NEIGHBOUR_SHARE` of the score of ``before[i]`` (the hit
    on the line just before it; None: that line is not one of them). A text that is not a
    hit (score 0) gains nothing."""
    out = list(scores)
    for i, j in enumerate(before):
        if j is not None and scores[i] > 0.0:
            out[i] += NEIGHBOUR_SHARE * scores[j]
    return out


# -- the index's words table ---------------------------------------------------------------


@functools.lru_cache(maxsize=1 << 16)
def _token(term: str) -> str:
    """A term as the words table stores it: 8 characters of ``[a-z2-7]`` naming it (40 bits
    of a digest), so SQLite's plain ``ascii`` tokenizer sees exactly the terms
    :func:`~segue._retrieval.words.terms` made, whatever their characters."""
    raw = hashlib.blake2b(term.encode("utf-8", "surrogatepass"), digest_size=5).digest()
    return base64.b32encode(raw).decode("ascii").lower()


def index_terms(text: str) -> str:
    """The words table's text for an item: its terms, each as a token."""
    return " ".join(_token(t) for t in terms(text))


def index_query(query: str) -> str | None:
    """An FTS5 query for items holding any of the query's terms (None: it has none)."""
    wanted = query_terms(query)
    return " OR ".join(f'"{_token(t)}"' for t in wanted) if wanted else None
