"""Words search (R39): what a text's terms are, and how a page of items ranks for a query.

Pure: no I/O, no state beyond a stem cache. The same analysis serves documents and queries, so
that they meet:

* **Tokens.** A token is a run of word characters joined by ``.``, ``/``, ``\\``, ``:`` or
  ``-`` (``os.path.join``, ``src/a/b.py``, ``ERR_CONNECTION_RESET``, ``12:05``). Each token is
  NFKC-normalised (only when it is not ASCII: the common case stays cheap) and case-folded
  (:meth:`str.casefold`, so ``Straße`` meets ``STRASSE``).
* **Parts.** A token is findable as a whole *and* by its parts: it is split at its joiners,
  at ``_``, at camelCase humps (``parseConfig`` → ``parse``, ``config``) and between letters and
  digits (``E1101`` → ``e``, ``1101``; a hex digest with many such changes stays whole). Parts
  are Porter-stemmed and the stem cut to its first 5 characters (:mod:`segue._retrieval.stem`:
  "driver" meets "driving"); a compound's whole (Porter-stemmed, never cut, when it is one
  hump-split word), and each ``/``-segment
  of a path that is itself a compound (``numpy_handler.py``), are added unstemmed. Numbers are
  kept.
* **Stop words** are kept in documents (an exact phrase needs them) and dropped from queries,
  where they only add noise ("what error did the first run give?" → ``error``, ``first``,
  ``run``, ``give``); a query of nothing but stop words keeps them all.
* **Ranking** is BM25 (rare words weigh more, an item holding more of the query's words ranks
  higher, long items do not win by length) plus a bonus for the query's exact phrase, which
  ranks an item holding it above every item without it.
* **Passages.** :func:`best_passage` picks the window of a snippet where most distinct query
  terms meet, instead of the first match.
"""

from __future__ import annotations

import itertools
import math
import re
import threading
import unicodedata
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from segue._retrieval.stem import STEM_CHARS, porter, stem

__all__ = [
    "BM25_B",
    "BM25_K1",
    "PHRASE_BONUS",
    "STOP_WORDS",
    "Options",
    "PageScorer",
    "best_passage",
    "bm25_counted",
    "bm25_scores",
    "holds_any",
    "query_terms",
    "raw_tokens",
    "term_counts",
    "terms",
    "token_terms",
]

#: BM25's usual constants (Robertson & Zaragoza; Lucene's defaults).
BM25_K1 = 1.2
BM25_B = 0.75
#: Added to an item holding the query's exact phrase (two words or more): with BM25 scores of a
#: page rarely above ~10 per query term, this lifts every phrase hit above the items without it.
PHRASE_BONUS = 1000.0

#: English function words and question words, dropped from queries (never from documents), and
#: words a question uses about the conversation rather than its content ("what happened the
#: first time", "what was it called"): measured in bench/bench_lookback_quality.py, dropping
#: them lifted hit@1 and hit@3 on the tuning questions with hit@10 unchanged.
STOP_WORDS: frozenset[str] = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    let lets us also did didn doesn don isn wasn weren
    first last happen happened happens get got gets give gave given call called name named
    try tried finally actually anything something thing things""".split()  # noqa: SIM905 (a word list reads best as words)
)

# A token: word characters joined by . / \ : - (never starting or ending with a joiner).
_TOKEN = re.compile(r"\w+(?:[./\\:\-]\w+)*")
# Inside a token: the alphanumeric runs (``_`` and the joiners separate them).
_RUN = re.compile(r"[^\W_]+")
# camelCase humps and letter/digit changes of an ASCII run: HTTPServer → HTTP, Server.
_HUMP = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_LETTERS_DIGITS = re.compile(r"\d+|[^\W\d_]+")
# A run with more letter/digit changes than this is an id or digest: kept whole, not shredded.
_MAX_CHANGES = 2
# A token longer than this (base64, a minified line) is kept whole only.
_MAX_SPLIT = 64
_JOINERS = re.compile(r"[./\\:\-_]")


def _fold(text: str) -> str:
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    return text.casefold()


def _changes(run: str) -> int:
    if run.isalpha() or run.isdigit():  # most runs: no letter next to a digit
        return 0
    return sum(1 for a, b in itertools.pairwise(run) if a.isdigit() != b.isdigit())


def _pieces(run: str, humps: bool) -> list[str]:
    """The words of one alphanumeric run (not yet folded)."""
    if _changes(run) > _MAX_CHANGES:
        return [run]
    if humps and run.isascii():
        return _HUMP.findall(run)
    return _LETTERS_DIGITS.findall(run)


def _whole(piece: str, stemming: bool = True) -> str:
    """A camelCase word's whole: folded, and its whole Porter stem (never cut: the whole
    stands for the identifier, not for a family of words)."""
    folded = _fold(piece)
    return porter(folded) if stemming and folded.isascii() else folded


@dataclass(frozen=True, slots=True)
class _Token:
    start: int
    end: int
    parts: tuple[str, ...]  # the token's words, folded and stemmed, in order
    wholes: tuple[str, ...]  # the compound and its compound path segments, folded, unstemmed
    raw_parts: tuple[str, ...] = field(default=())  # folded, unstemmed (for stop words)


@dataclass(frozen=True, slots=True)
class Options:
    """Switches for measuring each idea of the analysis (bench/bench_lookback_quality.py)."""

    stemming: bool = True
    #: the characters of a Porter stem a word's term keeps (stem.STEM_CHARS; 0: all of them)
    stem_chars: int = STEM_CHARS
    #: identifiers split at humps and letter/digit changes, and their wholes kept as terms
    identifiers: bool = True


DEFAULT = Options()


def _analyse_token(raw: str, start: int, humps: bool = True, opt: Options = DEFAULT) -> _Token:
    parts, wholes, raw_parts = _analysis(raw, humps, opt)
    return _Token(start, start + len(raw), parts, wholes, raw_parts)


_Analysis = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]
#: :func:`terms`' own cache of ASCII tokens under the default options (a dict lookup costs less
#: than the lru_cache's hashing of its arguments); emptied when full, so its size is bounded
_KNOWN: dict[str, _Analysis] = {}
_KNOWN_MAX = 1 << 15


# A token's analysis depends on its text alone, and an agent's transcript repeats its tokens
# (identifiers, paths, words) over and over: cached, rebuilding an index analyses each once.
@lru_cache(maxsize=1 << 15)
def _analysis(raw: str, humps: bool, opt: Options) -> _Analysis:
    """(parts, wholes, raw parts) of one token: see :class:`_Token`."""
    if len(raw) > _MAX_SPLIT:
        whole = _fold(raw)
        return (whole,), (), (whole,)
    humps = humps and opt.identifiers
    runs = _RUN.findall(raw)
    pieces = [p for run in runs for p in _pieces(run, humps)] if opt.identifiers else runs
    raw_parts = tuple(map(_fold, pieces))
    # each piece's term: Porter-stemmed and cut (stem.stem), without folding it again
    chars = opt.stem_chars
    parts = (tuple(stem(f, chars) if f.isascii() else f for f in raw_parts) if opt.stemming
             else raw_parts)  # fmt: skip
    wholes: list[str] = []
    if opt.identifiers and (len(pieces) > 1 or (pieces and pieces[0] != raw)):
        folded = _fold(raw)
        # A hump-split word (camelCase) is one word to a reader: stemmed like one, so the query
        # "camelcase" meets it; a compound with joiners is kept as written.
        wholes.append(folded if _JOINERS.search(raw) else _whole(raw, opt.stemming))
        if "/" in raw or "\\" in raw:
            for segment in re.split(r"[/\\]", folded):
                if _JOINERS.search(segment) and segment not in wholes:
                    wholes.append(segment)
    return parts, tuple(w for w in wholes if w), raw_parts


def _tokens(text: str, opt: Options = DEFAULT) -> Iterator[_Token]:
    for match in _TOKEN.finditer(text):
        raw = match.group()
        if not raw.isascii():
            normal = unicodedata.normalize("NFKC", raw)
            if normal != raw and not _TOKEN.fullmatch(normal):
                # NFKC made separators (¼ → 1⁄4): analyse what it made, at this token's place.
                for sub in _TOKEN.finditer(normal):
                    # Case humps made by NFKC (𝔘 → U) are not the writer's: no camelCase split.
                    token = _analyse_token(sub.group(), 0, humps=False, opt=opt)
                    yield _Token(match.start(), match.end(), token.parts, token.wholes,
                                 token.raw_parts)  # fmt: skip
                continue
        yield _analyse_token(raw, match.start(), opt=opt)


def _sequence(text: str, opt: Options = DEFAULT) -> list[str]:
    """The text's words in order (parts only), for the exact-phrase test."""
    if opt is DEFAULT:  # each distinct token analysed once, through terms' cache
        return [p for raw in _TOKEN.findall(text) for parts, _ in _raw_terms(raw) for p in parts]
    return [part for token in _tokens(text, opt) for part in token.parts]


def terms(text: str, opt: Options = DEFAULT) -> list[str]:
    """The terms a document is found by: every token's parts, then the compounds' wholes.

    The parts come first and in text order (so a phrase is a run of them); the wholes follow.
    Never an empty string.
    """
    parts: list[str] = []
    wholes: list[str] = []
    if text.isascii() and opt is DEFAULT:  # the common case: no NFKC; a plain dict cache
        known = _KNOWN
        for raw in _TOKEN.findall(text):
            found = known.get(raw)
            if found is None:
                if len(known) >= _KNOWN_MAX:
                    known.clear()
                found = known[raw] = _analysis(raw, True, opt)
            parts.extend(found[0])
            wholes.extend(found[1])
    else:
        for token in _tokens(text, opt):
            parts.extend(token.parts)
            wholes.extend(token.wholes)
    return [t for t in parts + wholes if t]


def token_terms(token: str) -> tuple[list[str], list[str]]:
    """The terms :func:`terms` makes of one of :func:`raw_tokens`' tokens: its parts and
    its wholes (a text's terms are its tokens' parts, then their wholes)."""
    if token.isascii():
        if len(token) <= _MAX_SPLIT and (token.isdigit() or (token.isalpha() and token.islower())):
            return [stem(token)], []  # a plain word or number: one part, no whole
        parts, wholes, _ = _analysis(token, True, DEFAULT)
        return [t for t in parts if t], [t for t in wholes if t]
    every: list[str] = []
    joined: list[str] = []
    for found in _tokens(token):
        every.extend(found.parts)
        joined.extend(found.wholes)
    return [t for t in every if t], [t for t in joined if t]


def raw_tokens(text: str) -> list[str]:
    """The text's tokens as written (the unit :func:`terms` analyses), in text order."""
    return _TOKEN.findall(text)


def query_terms(query: str, *, stop_words: bool = True, opt: Options = DEFAULT) -> list[str]:
    """A query's distinct terms, in first-seen order, analysed as :func:`terms` does.

    With ``stop_words`` (the default) English function and question words are dropped, unless
    that would leave nothing.
    """
    kept: list[str] = []
    every: list[str] = []
    for token in _tokens(query, opt):
        for raw, part in zip(token.raw_parts, token.parts, strict=False):
            every.append(part)
            if not (stop_words and raw in STOP_WORDS):
                kept.append(part)
        kept.extend(token.wholes)
        every.extend(token.wholes)
    chosen = kept if kept else every
    return [t for t in dict.fromkeys(chosen) if t]


def _idf(n_docs: int, doc_freq: int) -> float:
    # The "plus one" form (Lucene): never negative, so a word in most items still counts a little.
    return math.log(1.0 + (n_docs - doc_freq + 0.5) / (doc_freq + 0.5))


def bm25_scores(
    query: Sequence[str],
    docs: Sequence[Sequence[str]],
    *,
    k1: float = BM25_K1,
    b: float = BM25_B,
    phrase: Sequence[bool] | None = None,
    phrase_bonus: float = PHRASE_BONUS,
    doc_freq: dict[str, int] | None = None,
    n_docs: int | None = None,
    avg_len: float | None = None,
) -> list[float]:
    """BM25 of each document (a list of terms) for the query's distinct terms.

    The statistics (document frequency, count, average length) come from ``docs`` itself, i.e.
    the page being ranked, unless the caller passes corpus-wide ones. ``phrase[i]`` marks a
    document holding the exact phrase: it gets ``phrase_bonus`` on top. 0.0 means no query term.
    """
    wanted = list(dict.fromkeys(query))
    counts = [Counter(doc) for doc in docs]
    tfs = [[count.get(t, 0) for t in wanted] for count in counts]
    freq = None if doc_freq is None else [doc_freq.get(t, 0) for t in wanted]
    return bm25_counted([len(d) for d in docs], tfs, k1=k1, b=b, phrase=phrase,
                        phrase_bonus=phrase_bonus, doc_freq=freq, n_docs=n_docs,
                        avg_len=avg_len)  # fmt: skip


def bm25_counted(
    lengths: Sequence[int],
    tfs: Sequence[Sequence[int]],
    *,
    k1: float = BM25_K1,
    b: float = BM25_B,
    phrase: Sequence[bool] | None = None,
    phrase_bonus: float = PHRASE_BONUS,
    doc_freq: Sequence[int] | None = None,
    n_docs: int | None = None,
    avg_len: float | None = None,
) -> list[float]:
    """:func:`bm25_scores` from what it needs of each document: its number of terms
    (``lengths[i]``) and how many times each distinct query term is among them (``tfs[i][j]``,
    in the query's order), so a caller never builds a document's whole list of terms."""
    width = len(tfs[0]) if tfs else 0
    if n_docs is None:
        n_docs = len(lengths)
    if doc_freq is None:
        doc_freq = [sum(1 for tf in tfs if tf[j]) for j in range(width)]
    if avg_len is None:
        avg_len = (sum(lengths) / len(lengths)) if lengths else 0.0
    idf = [_idf(n_docs, doc_freq[j]) for j in range(width)]
    scores: list[float] = []
    for i, (length, tf_row) in enumerate(zip(lengths, tfs, strict=True)):
        norm = k1 * (1.0 - b + b * (length / avg_len if avg_len else 0.0))
        score = 0.0
        for j, tf in enumerate(tf_row):
            if tf:
                score += idf[j] * tf * (k1 + 1.0) / (tf + norm)
        if phrase is not None and phrase[i] and score > 0.0:
            score += phrase_bonus
        scores.append(score)
    return scores


def _contains_run(haystack: Sequence[str], needle: Sequence[str]) -> bool:
    if not needle or len(needle) > len(haystack):
        return False
    # \x1f never occurs in a term (terms are word characters and joiners).
    return ("\x1f" + "\x1f".join(needle) + "\x1f") in ("\x1f" + "\x1f".join(haystack) + "\x1f")


class PageScorer:
    """Ranks one page of item texts for words queries (the bounded scan ranks per page, R39).

    ``weights`` multiply each item's score (e.g. machine-authored notes below people's text).
    A text is read for what the query needs of it (:func:`term_counts`), and for the exact
    phrase only when it holds every one of the phrase's searched words.
    """

    def __init__(self, texts: Sequence[str], *, weights: Sequence[float] | None = None,
                 k1: float = BM25_K1, b: float = BM25_B) -> None:  # fmt: skip
        if weights is not None and len(weights) != len(texts):
            raise ValueError("PageScorer: one weight per text")
        self._texts = list(texts)
        self._weights = list(weights) if weights is not None else None
        self._k1 = k1
        self._b = b

    def scores(self, query: str) -> list[float]:
        """Each text's score for the query (0.0: it holds none of the query's terms)."""
        wanted = list(dict.fromkeys(query_terms(query)))
        words = _sequence(query)
        counted = [term_counts(text, wanted) for text in self._texts]
        # a text can hold the phrase only where each of its words that the query searches
        # for is among the text's terms (the others, stop words, are checked by the run)
        slot = {t: j for j, t in enumerate(wanted)}
        needed = [slot[w] for w in words if w in slot]
        phrase = [
            len(words) >= 2 and all(tf[j] for j in needed)
            and _contains_run(_sequence(text), words)
            for text, (_, tf) in zip(self._texts, counted, strict=True)
        ]
        scores = bm25_counted([n for n, _ in counted], [tf for _, tf in counted], k1=self._k1,
                              b=self._b, phrase=phrase)  # fmt: skip
        if self._weights is not None:
            scores = [s * w for s, w in zip(scores, self._weights, strict=True)]
        return scores

    def rank(self, query: str) -> list[int]:
        """Indices of the texts holding a query term, best first; ties go to the later text."""
        scores = self.scores(query)
        hits = [i for i, s in enumerate(scores) if s > 0.0]
        return sorted(hits, key=lambda i: (-scores[i], -i))


_Terms = tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]
#: the tokens :func:`_tokens` makes of a non-ASCII raw token (NFKC may split it), bounded
_OTHER: dict[str, _Terms] = {}


def _raw_terms(raw: str) -> _Terms:
    """``(parts, wholes)`` of each token :func:`_tokens` makes of one of
    :func:`raw_tokens`' tokens (one, unless NFKC splits it): they depend on it alone."""
    if raw.isascii():
        found = _KNOWN.get(raw)
        if found is None:
            if len(_KNOWN) >= _KNOWN_MAX:
                _KNOWN.clear()
            found = _KNOWN[raw] = _analysis(raw, True, DEFAULT)
        return ((found[0], found[1]),)
    other = _OTHER.get(raw)
    if other is None:
        if len(_OTHER) >= _KNOWN_MAX:
            _OTHER.clear()
        other = _OTHER[raw] = tuple((t.parts, t.wholes) for t in _tokens(raw))
    return other


class _Wanted:
    """What each raw token gives one query's terms, learnt as the tokens come (a listing
    asks the same query of every hit): the query terms it makes, for a passage, in the
    order and with the repeats :func:`best_passage` counts; and, for :func:`term_counts`,
    its number of terms and ``(slot, times)`` of each query term among them."""

    def __init__(self, wanted: tuple[str, ...]) -> None:
        self.key = wanted
        self.set = frozenset(wanted)
        self._slot = {t: i for i, t in enumerate(wanted)}
        self.made: dict[str, tuple[str, ...]] = {}
        self.counted: dict[str, tuple[int, tuple[tuple[int, int], ...]]] = {}

    def makes(self, raw: str) -> tuple[str, ...]:
        got = self.made.get(raw)
        if got is None:
            if len(self.made) >= _KNOWN_MAX:
                self.made.clear()
            wanted = self.set
            got = self.made[raw] = tuple(
                t for parts, wholes in _raw_terms(raw) for t in dict.fromkeys(parts + wholes)
                if t in wanted
            )
        return got

    def counts(self, raw: str) -> tuple[int, tuple[tuple[int, int], ...]]:
        got = self.counted.get(raw)
        if got is None:
            if len(self.counted) >= _KNOWN_MAX:
                self.counted.clear()
            found = [t for parts, wholes in _raw_terms(raw) for t in parts + wholes if t]
            slot = self._slot
            times = Counter(slot[t] for t in found if t in slot)
            got = self.counted[raw] = len(found), tuple(times.items())
        return got


_LAST: list[_Wanted] = []  # the query asked last (one)


def _wanted(terms_: Sequence[str]) -> _Wanted:
    key = tuple(terms_)
    if not _LAST or _LAST[0].key != key:
        _LAST[:] = [_Wanted(key)]
    return _LAST[0]


#: the hits whose tokens :func:`_token_counts` holds, at most this many characters of them
_COUNTED_CHARS = 1 << 20
_COUNTED: dict[str, Counter[str]] = {}
_counted_chars = [0]
_COUNTED_LOCK = threading.Lock()  # the bound holds for every thread of the process


def _token_counts(text: str) -> Counter[str]:
    """How many times each raw token stands in ``text``. A model's search asks it of each hit
    three times (is it a hit, its best passage, its counts), so :func:`holds_any` keeps the
    counts of a text that is a hit (:func:`_keep`), until the texts kept pass
    :data:`_COUNTED_CHARS` and all are let go; everything else only reads what is kept (a
    person's search counts every item once: keeping them would only churn). Never to be
    changed by a caller."""
    got = _COUNTED.get(text)
    return Counter(_TOKEN.findall(text)) if got is None else got


def _keep(text: str, counts: Counter[str]) -> None:
    with _COUNTED_LOCK:
        if text in _COUNTED:
            return
        if _counted_chars[0] + len(text) > _COUNTED_CHARS:
            _COUNTED.clear()
            _counted_chars[0] = 0
        _COUNTED[text] = counts
        _counted_chars[0] += len(text)


def _passage_hits(text: str, wanted: Sequence[str]) -> list[tuple[int, int, str]]:
    """``(start, end, term)`` of each query term a token of the text makes, in text order
    (a token's distinct terms in the order :func:`terms` gives them): each distinct token
    analysed once, then only the tokens that make a query term looked at where they stand."""
    memo = _wanted(wanted)
    hot = {raw: made for raw in _token_counts(text) if (made := memo.makes(raw))}
    hits: list[tuple[int, int, str]] = []
    if not hot:
        return hits
    if len(hot) <= _FEW_HOT:  # found where they stand, by the regular expression engine
        matches = re.finditer(_WHOLE_OF.replace("{}", "|".join(map(re.escape, hot))), text)
    else:
        matches = _TOKEN.finditer(text)
    for match in matches:
        hot_terms = hot.get(match.group())
        if hot_terms is not None:
            start, end = match.span()
            hits.extend((start, end, term) for term in hot_terms)
    return hits


#: the most distinct tokens :func:`_passage_hits` finds by one alternation
_FEW_HOT = 32
# One of the tokens in {} where _TOKEN's scan makes it a whole token: no word character
# before it, nor a joiner after one (the token before would go on through it), and the
# same after it.
_WHOLE_OF = r"(?<!\w)(?<!\w[./\\:\-])(?:{})(?!\w)(?![./\\:\-]\w)"


def term_counts(text: str, wanted: Sequence[str]) -> tuple[int, list[int]]:
    """``len(terms(text))`` and how many times each of ``wanted`` is among them, without the
    list: the text's distinct tokens are analysed (through :func:`terms`' cache) and
    weighed by how often they occur."""
    memo = _wanted(wanted)
    counts = [0] * len(wanted)
    length = 0
    for raw, times in _token_counts(text).items():
        n, found = memo.counts(raw)
        length += n * times
        for i, k in found:
            counts[i] += k * times
    return length, counts


def holds_any(text: str, wanted: Sequence[str]) -> bool:
    """Whether any of ``wanted`` is among ``terms(text)``: each distinct token of the text
    looked up once (a search asks this of every item it reads)."""
    if not wanted:
        return False
    memo = _wanted(wanted)
    made = memo.made
    counts = _token_counts(text)
    for raw in counts:
        got = made.get(raw)
        if got is None:
            got = memo.makes(raw)
        if got:
            if text not in _COUNTED:  # checked again under the lock
                _keep(text, counts)
            return True
    return False


def best_passage(text: str, query: str, width: int) -> tuple[int, int]:
    """``(start, end)`` of the ``width``-character window where most distinct query terms meet.

    Offsets are code-point offsets into ``text`` (a ``str`` slice never splits a code point);
    ``0 <= start <= end <= len(text)`` and ``end - start <= width``. The matched span is centred
    in the window; with nothing matched it is the start of the text.
    """
    width = max(0, width)
    if len(text) <= width:
        return 0, len(text)
    wanted = list(dict.fromkeys(query_terms(query)))
    hits = _passage_hits(text, wanted) if wanted else []
    if not hits:
        return 0, width
    best_key: tuple[int, int] = (0, 0)  # (distinct terms, matches) of the best window so far
    best_span = (hits[0][0], min(hits[0][1], hits[0][0] + width))
    window: Counter[str] = Counter()
    right = 0
    for left, (start, _end, term) in enumerate(hits):
        right = max(right, left)
        while right < len(hits) and hits[right][1] - start <= width:
            window[hits[right][2]] += 1
            right += 1
        if right > left:  # the earliest window wins a tie
            key = (len(window), right - left)
            if key > best_key:
                best_key = key
                best_span = (start, hits[right - 1][1])
            window[term] -= 1
            if not window[term]:
                del window[term]
    span_start, span_end = best_span
    slack = max(0, width - (span_end - span_start))
    start = min(max(0, span_start - slack // 2), len(text) - width)
    return start, start + width
