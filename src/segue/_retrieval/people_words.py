"""``segue history search --words``: a person's ranked words search over the whole transcript
(every window, also below the floor: it is their own data), with the very analysis the
model's words search uses (:mod:`segue._retrieval.words`). Pure over the rows it is given.

The hits are the items whose displayed text holds any of the query's terms, ranked by BM25
over the whole transcript (document frequencies of every item), the exact phrase highest,
ties newest first; each snippet is centred on the best passage."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator

from segue._errors import UsageError
from segue._messages import Row
from segue._retrieval.words import best_passage, bm25_scores, query_terms, terms
from segue._views.windows import Hit, Item, snippet, walk


def words_search(rows: Iterable[Row], query: str, *, context: int = 60) -> Iterator[Hit]:
    """The ranked hits (see the module docstring)."""
    wanted = query_terms(query)
    if not query or not wanted:
        raise UsageError("the search query must not be empty" if not query else
                         "the search query has no words; search it literally (without --words)")
    wanted_set = frozenset(wanted)
    n_docs = 0
    total_len = 0
    doc_freq: Counter[str] = Counter()
    found: list[tuple[Item, list[str]]] = []
    for event in walk(rows):
        if not isinstance(event, Item):
            continue
        doc = terms(event.text)
        n_docs += 1
        total_len += len(doc)
        held = wanted_set.intersection(doc)
        doc_freq.update(held)
        if held:
            found.append((event, doc))
    if not found:
        return
    words = " ".join(query.casefold().split())
    phrase = [" " in words and words in " ".join(i.text.casefold().split()) for i, _ in found]
    scores = bm25_scores(wanted, [d for _, d in found], phrase=phrase, doc_freq=dict(doc_freq),
                         n_docs=n_docs, avg_len=total_len / n_docs)
    for index in sorted(range(len(found)), key=lambda i: (-scores[i], -i)):
        item, doc = found[index]
        start, end = best_passage(item.text, query, 2 * context)
        yield Hit(item, sum(1 for t in doc if t in wanted_set), snippet(item.text, start, end, 0))
