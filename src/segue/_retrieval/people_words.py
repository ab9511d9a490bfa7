"""``segue history search --words``: a person's ranked words search over the whole transcript
(every window, also below the floor: it is their own data), with the very analysis the
model's words search uses (:mod:`segue._retrieval.words`). Pure over the rows it is given;
every backend answers it through here (:meth:`segue._retrieval.backends.Backend.people_words`).

The hits are the items whose displayed text holds any of the query's terms, ranked by BM25
over the whole transcript (document frequencies of every item), the exact phrase highest, plus
the model's share of the score of the hit on the line just before
(:func:`segue._retrieval.ranking.with_neighbours`), ties newest first; each snippet is centred
on the best passage.

Memory stays bounded whatever the history's size: the first pass over the rows keeps only
the statistics and, per hit, a few numbers (its place, length, the counts of the query's
terms, whether it holds the phrase), in flat arrays; the hits are then printed best first,
read again in batches of at most :data:`BATCH_ITEMS` items and :data:`BATCH_CHARS`
characters, one more pass over the rows a batch (one in all for most queries). The history
index answers the same search without reading every row
(:mod:`segue._retrieval.index_people_words`), ranking with the same :class:`Tally`.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Iterator

from segue._errors import UsageError
from segue._history.protocol import Entry
from segue._messages import Row
from segue._retrieval.ranking import with_neighbours
from segue._retrieval.words import best_passage, bm25_scores, query_terms, term_counts
from segue._views.windows import Hit, Item, snippet, walk

#: the hits read again per pass over the rows, at most (and their text, in characters)
BATCH_ITEMS = 2000
BATCH_CHARS = 8 << 20

Entries = Callable[[], Iterable[Entry]]
#: where a line is: its start and its end, in one source's own unit (bytes of the history, or
#: the PostgreSQL store's line numbers): the line just before ends where a line starts
Line = tuple[int, int]


def words_search(entries: Entries, query: str, *, context: int = 60) -> Iterator[Hit]:
    """The ranked hits (see the module docstring). ``entries()`` reads the transcript from its
    start, each time it is called. A query without words is refused at once."""
    return _ranked(entries, query, wanted_terms(query), context)


def wanted_terms(query: str) -> list[str]:
    """The query's terms; UsageError for a query without words."""
    wanted = query_terms(query)
    if not query or not wanted:
        raise UsageError("the search query must not be empty" if not query else
                         "the search query has no words; search it literally (without --words)")
    return wanted


def _items(entries: Entries) -> Iterator[tuple[Item, Line]]:
    """Every item people see, with its line."""
    line: list[Line] = [(0, 0)]

    def rows() -> Iterator[Row]:
        for entry in entries():
            if entry.row is not None:
                line[0] = (entry.end - entry.size - 1, entry.end)
                yield entry.row

    # walk() makes an item of a row before it asks for the next row
    return ((event, line[0]) for event in walk(rows()) if isinstance(event, Item))


class Tally:
    """The statistics of one query over every item people see, and, per hit, a few numbers in
    flat arrays (its place, line, length, the counts of the query's terms, whether it holds
    the phrase, its size and mark): what ranks the hits, the same for every source of
    items."""

    def __init__(self, query: str, wanted: list[str]) -> None:
        self.unique = list(dict.fromkeys(wanted))
        self._words = " ".join(query.casefold().split())
        self.n_docs = self.total_len = 0
        self._doc_freq = [0] * len(self.unique)
        self.at, self._length, self._phrase = array("q"), array("q"), array("b")
        self.sizes, self.marks = array("q"), array("q")
        self._starts, self._ends = array("q"), array("q")
        self.counts = array("l")  # len(unique) a hit: each query term's count in it

    def others(self, docs: int, length: int) -> None:
        """Count items holding no query term: ``docs`` of them, ``length`` terms in all."""
        self.n_docs += docs
        self.total_len += length

    def item(self, place: int, text: str, mark: int, line: Line) -> int:
        """Count one item; its number of terms. A hit (an item holding a query term) is
        kept, under ``place`` (the later, the newer) with its ``line``."""
        length, tf = term_counts(text, self.unique)
        self.n_docs += 1
        self.total_len += length
        if any(tf):
            for i, n in enumerate(tf):
                self._doc_freq[i] += n > 0
            self.at.append(place)
            self._length.append(length)
            words = self._words
            self._phrase.append(" " in words and words in " ".join(text.casefold().split()))
            self.sizes.append(len(text))
            self.marks.append(mark)
            self._starts.append(line[0])
            self._ends.append(line[1])
            self.counts.extend(tf)
        return length

    def matches(self, h: int) -> int:
        k = len(self.unique)
        return sum(self.counts[h * k:(h + 1) * k])

    def order(self) -> list[int]:
        """The hits (their numbers), best first: BM25 over every item, the exact phrase
        highest, the share of the hit on the line just before, ties newest first."""
        if not self.at:
            return []
        unique = self.unique
        stats = {t: self._doc_freq[i] for i, t in enumerate(unique)}
        k = len(unique)
        avg = self.total_len / self.n_docs
        scores = array("d", (
            bm25_scores(unique, [_doc(unique, self.counts[h * k:(h + 1) * k], self._length[h])],
                        phrase=[bool(self._phrase[h])], doc_freq=stats, n_docs=self.n_docs,
                        avg_len=avg)[0]
            for h in range(len(self.at))
        ))
        ends = {end: h for h, end in enumerate(self._ends)}
        scores = array("d", with_neighbours(scores, [ends.get(s) for s in self._starts]))
        at = self.at
        return sorted(range(len(at)), key=lambda h: (-scores[h], -at[h]))


def _ranked(entries: Entries, query: str, wanted: list[str], context: int) -> Iterator[Hit]:
    tally = Tally(query, wanted)
    for ordinal, (item, line) in enumerate(_items(entries)):
        tally.item(ordinal, item.text, _mark(item), line)
    at, marks = tally.at, tally.marks
    for batch in batches(tally):
        places = {at[h]: h for h in batch}
        got: dict[int, Item] = {}
        for ordinal, (item, _) in enumerate(_items(entries)):
            if ordinal in places:
                got[places[ordinal]] = item
                if len(got) == len(places):
                    break
        for h in batch:
            back = got.pop(h, None)
            if back is None or _mark(back) != marks[h]:  # rewritten since it was ranked
                continue
            yield hit(back, query, tally.matches(h), context)


def batches(tally: Tally) -> Iterator[list[int]]:
    """The hits best first, in batches of at most :data:`BATCH_ITEMS` items and (but for
    a single longer one) :data:`BATCH_CHARS` characters: what is read again at once."""
    order, sizes = tally.order(), tally.sizes
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
        yield batch


def hit(item: Item, query: str, matches: int, context: int) -> Hit:
    """The listing's line for a hit: its snippet centred on the best passage."""
    start, end = best_passage(item.text, query, 2 * context)
    return Hit(item, matches, snippet(item.text, start, end, 0))


def _mark(item: Item) -> int:
    return hash((item.item_id, item.row.id, len(item.text)))


def _doc(unique: list[str], tf: Iterable[int], length: int) -> list[str]:
    """A stand-in document of ``length`` terms with each query term ``tf`` times (what BM25
    reads of a document; the other terms are no query term)."""
    doc = [t for t, n in zip(unique, tf, strict=True) for _ in range(n)]
    return doc + [""] * (length - len(doc))
