"""``segue history search --words``: a person's ranked words search over the whole transcript
(every window, also below the floor: it is their own data), with the very analysis the
model's words search uses (:mod:`segue._retrieval.words`). Pure over the rows it is given;
every backend answers it through here (:meth:`segue._retrieval.backends.Backend.people_words`).

The hits are the items whose displayed text holds any of the query's terms, ranked by BM25
over the whole transcript (document frequencies of every item), the exact phrase highest,
ties newest first; each snippet is centred on the best passage.

Memory stays bounded whatever the history's size: the first pass over the rows keeps only
the statistics and, per hit, a few numbers (its place, length, the counts of the query's
terms, whether it holds the phrase), in flat arrays; the hits are then printed best first,
read again in batches of at most :data:`BATCH_ITEMS` items and :data:`BATCH_CHARS`
characters, one more pass over the rows a batch (one in all for most queries).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Iterator

from segue._errors import UsageError
from segue._messages import Row
from segue._retrieval.words import best_passage, bm25_scores, query_terms, terms
from segue._views.windows import Hit, Item, snippet, walk

#: the hits read again per pass over the rows, at most (and their text, in characters)
BATCH_ITEMS = 2000
BATCH_CHARS = 8 << 20

Rows = Callable[[], Iterable[Row]]


def words_search(rows: Rows, query: str, *, context: int = 60) -> Iterator[Hit]:
    """The ranked hits (see the module docstring). ``rows()`` reads the transcript from its
    start, each time it is called. A query without words is refused at once."""
    wanted = query_terms(query)
    if not query or not wanted:
        raise UsageError("the search query must not be empty" if not query else
                         "the search query has no words; search it literally (without --words)")
    return _ranked(rows, query, wanted, context)


def _items(rows: Rows) -> Iterator[Item]:
    return (event for event in walk(rows()) if isinstance(event, Item))


def _ranked(rows: Rows, query: str, wanted: list[str], context: int) -> Iterator[Hit]:
    unique = list(dict.fromkeys(wanted))
    index = {t: i for i, t in enumerate(unique)}
    words = " ".join(query.casefold().split())
    n_docs = total_len = 0
    doc_freq = [0] * len(unique)
    at, length, phrase, sizes = array("q"), array("q"), array("b"), array("q")
    marks = array("q")  # what the item was, to tell it again when it is read back
    counts = array("l")  # len(unique) a hit: each query term's count in it
    for ordinal, item in enumerate(_items(rows)):
        doc = terms(item.text)
        n_docs += 1
        total_len += len(doc)
        tf = [0] * len(unique)
        for term in doc:
            slot = index.get(term)
            if slot is not None:
                tf[slot] += 1
        if not any(tf):
            continue
        for slot, n in enumerate(tf):
            doc_freq[slot] += n > 0
        at.append(ordinal)
        length.append(len(doc))
        phrase.append(" " in words and words in " ".join(item.text.casefold().split()))
        sizes.append(len(item.text))
        marks.append(_mark(item))
        counts.extend(tf)
    if not at:
        return
    stats = {t: doc_freq[i] for i, t in enumerate(unique)}
    k = len(unique)
    scores = array("d", (
        bm25_scores(unique, [_doc(unique, counts[h * k:(h + 1) * k], length[h])],
                    phrase=[bool(phrase[h])], doc_freq=stats, n_docs=n_docs,
                    avg_len=total_len / n_docs)[0]
        for h in range(len(at))
    ))
    order = sorted(range(len(at)), key=lambda h: (-scores[h], -at[h]))
    done = 0
    while done < len(order):
        batch: list[int] = []
        chars = 0
        while done < len(order) and len(batch) < BATCH_ITEMS and (
            not batch or chars + sizes[order[done]] <= BATCH_CHARS
        ):
            batch.append(order[done])
            chars += sizes[order[done]]
            done += 1
        places = {at[h]: h for h in batch}
        got: dict[int, Item] = {}
        for ordinal, item in enumerate(_items(rows)):
            if ordinal in places:
                got[places[ordinal]] = item
                if len(got) == len(places):
                    break
        for h in batch:
            back = got.pop(h, None)
            if back is None or _mark(back) != marks[h]:  # rewritten since it was ranked
                continue
            start, end = best_passage(back.text, query, 2 * context)
            yield Hit(back, sum(counts[h * k:(h + 1) * k]), snippet(back.text, start, end, 0))


def _mark(item: Item) -> int:
    return hash((item.item_id, item.row.id, len(item.text)))


def _doc(unique: list[str], tf: Iterable[int], length: int) -> list[str]:
    """A stand-in document of ``length`` terms with each query term ``tf`` times (what BM25
    reads of a document; the other terms are no query term)."""
    doc = [t for t, n in zip(unique, tf, strict=True) for _ in range(n)]
    return doc + [""] * (length - len(doc))
