"""Pure preparation of the PostgreSQL store's rows: what each physical line is stored with.

A line is kept as its exact bytes; the other columns are derived from them the way the JSONL
readers derive them, so every answer computed from the table equals the one computed from
the files:

* people's view (``segue history``): ``scan.parse_line``, the reset key test,
  ``views.windows.walk`` for the window id and the displayed text that search indexes;
* the agent's view (``session_history``, :class:`Agent`): the very
  :func:`segue._retrieval.project.classify` of the bounded scan and of the history index
  (kind, window, projection R25, floor candidates R11 including undecodable lines), the
  item's ids, role and tool names (R36), its projected text folded (:func:`searchable`),
  its words (R39): the terms :func:`segue._retrieval.words.terms` finds it by, each with its
  count, in PostgreSQL's ``tsvector`` spelling (:func:`words_of`); and every row's literal
  tokens, those of the agent's and of people's text (:mod:`segue.postgres._lit`).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from segue._context.boundaries import (
    is_boundary,
    is_compaction_boundary,
    item_id,
    window_id_of_boundary,
)
from segue._context.floor import mentions_reset_key
from segue._history.scan import MAX_LINE, parse_line
from segue._messages import Row
from segue._retrieval.filters import tool_names
from segue._retrieval.index_words import people_extra, words_and_lines
from segue._retrieval.project import Kind, classify, raw_window_id
from segue._retrieval.reader import RawLine
from segue._views.project import display, is_hidden
from segue.postgres._lit import EMPTY, Lit, fold, lit_of

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
_SURROGATE = re.compile("[\ud800-\udfff]")
KIND_ITEM, KIND_BOUNDARY, KIND_FLOOR, KIND_SKIP = 0, 1, 2, 3
KINDS = {Kind.ITEM: KIND_ITEM, Kind.BOUNDARY: KIND_BOUNDARY, Kind.FLOOR: KIND_FLOOR,
         Kind.SKIP: KIND_SKIP}
ROOT_POS = -1  # ``win`` of the rows of the root window
TOOL_SEP = "\x1f"
#: a term's count in an item is kept up to this (BM25's weight of a term hardly grows past a
#: few occurrences: 32 weighs 96 % of an endless count, with the constants of ``words``)
MAX_COUNT = 32
#: the count beyond one is kept in these many bits, each a lexeme of its own (``words_of``)
COUNT_BITS = 5
#: the largest words column stored (a ``tsvector`` holds at most 1 MiB); an item with more
#: distinct terms is ``risky``: always a candidate, matched on its text
MAX_WORDS = 512 << 10
#: ``plen`` of a line a person's words search reads whatever the query: one too long to be
#: parsed when stored (it may be an item, or a boundary that opens a window), or whose
#: people's terms do not fit a column
PLEN_READ = -1


@dataclass(frozen=True)
class Agent:
    """What ``session_history`` needs of a line, computed once when it is stored.

    ``win`` is the ``pos`` of the line that starts the line's window (:data:`ROOT_POS` for the
    root window); a line starting a window has its own ``pos``, its window id in ``wid``
    (None when the id is the line's end position, ``w:raw:N``: computed when read, so a
    quarantine that moves later bytes moves it too) and its kind in ``wkind``. Items have
    their ids (UTF-8, lone surrogates kept), role, timestamp, tool names and ``abody``, the
    projected text as :func:`searchable` spells it; ``risky``: the text held a lone
    surrogate, or more words or tokens than a ``tsvector`` holds, so the search spelling may
    miss it and the row is always a candidate. ``lit``: the row's literal tokens (the
    agent's and people's text, :func:`segue.postgres._lit.lit_of`) as a ``tsvector``,
    ``longtok`` whether one was kept as windows, ``lex`` the tokens themselves (for the
    vocabulary; not a column). ``words``: the item's terms and their counts
    (:func:`words_of`), ``wlen`` how many terms it has (BM25's document length) and
    ``mach`` whether the text is a machine-authored note (ranked below people's).
    ``plen`` and ``pwords`` are for a person's words search (:mod:`segue.postgres._people_words`):
    for a line people see as an item, its number of terms (:data:`PLEN_READ`: not recorded,
    read the line) and the lexemes of its distinct terms that ``words`` lacks (None: none);
    None for a line people never see as an item."""

    kind: int
    length: int
    win: int
    wid: bytes | None = None
    wkind: str | None = None
    aid: bytes | None = None
    rid: bytes | None = None
    role: str | None = None
    ts: int | None = None
    tools: str | None = None
    abody: str | None = None
    risky: bool = False
    words: str | None = None
    wlen: int | None = None
    mach: bool | None = None
    lit: str | None = None
    longtok: bool = False
    plen: int | None = None
    pwords: str | None = None
    lex: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Prepared:
    pos: int
    off: int
    raw: bytes
    seq: int | None
    item: str | None
    marker: bool
    window_id: str
    body: str | None
    agent: Agent
    boundary: bool = False  # the line is a durable boundary (a rotation starts at it)


@functools.lru_cache(maxsize=4)  # people's text is mostly the agent's: folded once
def searchable(text: str) -> str:
    """The search index's spelling of a text: folded (see :func:`fold`) and storable in
    PostgreSQL (no NUL, no lone surrogate). Index hits are only candidates, confirmed on the
    row itself, so this has to keep every true match and nothing more."""
    return _UNSTORABLE.sub("\ufffd", fold(text))


def people_text(row: Row) -> str | None:
    """The text ``segue history search`` matches, for rows that are items (views.walk)."""
    if is_hidden(row) or (is_boundary(row) and not is_compaction_boundary(row)):
        return None
    return display(row).text


def body_of(row: Row) -> str | None:
    """:func:`people_text` as the ``body`` column holds it (:func:`searchable`)."""
    text = people_text(row)
    return None if text is None else searchable(text)


def id_bytes(ident: str) -> bytes:
    return ident.encode("utf-8", "surrogatepass")


def id_str(data: bytes) -> str:
    return bytes(data).decode("utf-8", "surrogatepass")


def storable(text: str) -> str:
    """Text PostgreSQL can hold (no NUL, no lone surrogate), for columns compared exactly
    (role, tool names): a row they mistake is checked again on its bytes when read."""
    return _UNSTORABLE.sub("\ufffd", text)


def people_of(raw: bytes) -> str | None:
    """:func:`people_text` of the line ``raw`` (None: it is no row people search)."""
    row = parse_line(raw) if len(raw) <= MAX_LINE else None
    return None if row is None else people_text(row)


def _lit(texts: tuple[str | None, ...], split: list[str] | None = None) -> Lit:
    return lit_of(texts, split) if any(texts) else EMPTY


def agent_of(raw: bytes, *, pos: int, off: int, win: int, people: str | None) -> Agent:
    """The agent's columns of the line ``raw`` (without its newline) stored at ``pos`` and
    global byte offset ``off``, in the window starting at ``win``; ``people`` is the line's
    :func:`people_text` (its tokens join the row's literal tokens)."""
    length = len(raw) + 1
    line = RawLine(
        off, off + length, raw if len(raw) <= MAX_LINE else None, mentions_reset_key(raw), True
    )
    seen = classify(line)
    kind = KINDS[seen.kind]
    long = len(raw) > MAX_LINE
    if seen.kind in (Kind.BOUNDARY, Kind.FLOOR) and seen.window_id is not None:
        own = None if seen.window_id == raw_window_id(line) else id_bytes(seen.window_id)
        lit = _lit((people,))
        plen, pwords = people_words(people, long=long)
        return Agent(kind, length, pos, own, seen.window_kind, risky=lit.risky,
                     lit=lit.vector, longtok=lit.long, plen=plen, pwords=pwords,
                     lex=lit.terms)
    item = seen.item
    if item is None or seen.row is None:
        lit = _lit((people,))
        plen, pwords = people_words(people, long=long)
        return Agent(kind, length, win, risky=lit.risky, lit=lit.vector,
                     longtok=lit.long, plen=plen, pwords=pwords, lex=lit.terms)
    names = tool_names(seen.row)
    words, wlen, split, found = _words(item.text)
    lit = _lit((item.text,) if people == item.text else (item.text, people), split)
    if people == item.text and words is not None:
        plen, pwords = wlen, None  # people read the agent's very text
    else:
        plen, pwords = people_words(people, long=long, agent=found if words else ())
    return Agent(
        kind,
        length,
        win,
        aid=id_bytes(item.item_id),
        rid=id_bytes(item.row_id),
        role=storable(item.role),
        ts=item.timestamp,
        tools=storable(TOOL_SEP + TOOL_SEP.join(names) + TOOL_SEP),
        abody=searchable(item.text),
        risky=words is None or lit.risky or _SURROGATE.search(item.text) is not None,
        words=words,
        wlen=wlen,
        mach=item.machine,
        lit=lit.vector,
        longtok=lit.long,
        plen=plen,
        pwords=pwords,
        lex=lit.terms,
    )


def people_words(
    people: str | None, *, long: bool, agent: Iterable[str] = ()
) -> tuple[int | None, str | None]:
    """``plen`` and ``pwords`` (:class:`Agent`) of a line people see as ``people`` (None:
    no item of theirs), whose ``words`` column holds the lexemes ``agent``; ``long``: the
    line is too long to have been parsed."""
    if long:
        return PLEN_READ, None
    if people is None:
        return None, None
    plen, extra = people_extra(people, agent)
    vector = " ".join(sorted(extra))
    if len(vector) > MAX_WORDS:
        return PLEN_READ, None
    return plen, vector or None


def words_of(text: str) -> tuple[str | None, int]:
    """The ``tsvector`` of a text's terms, and how many terms it has (BM25's length); None
    for the vector when it would not fit a column.

    Each distinct term (:func:`segue._retrieval.words.terms`) is its :func:`lexeme`, and its
    count is spelled in lexemes too, so that the GIN index alone answers how often an item
    holds a term: bit ``k`` of ``count - 1`` (the count up to :data:`MAX_COUNT`) set is the
    lexeme + ``k``. No positions: the vector is what the index is built from, not read
    back."""
    vector, n, _, _ = _words(text)
    return vector, n


def _words(text: str) -> tuple[str | None, int, list[str], Counter[str]]:
    """:func:`words_of`, the text's lines and its lexemes with their counts. The terms come
    as their lexemes from the history index's analysis (``index_words.words_and_lines``:
    each distinct line and chunk analysed once, the lexemes :func:`lexeme` spells), in
    another order but the same multiset."""
    spelled, split = words_and_lines(text)
    found = spelled.split()
    counts = Counter(found)
    spell = _SPELLINGS
    vector = " ".join([
        t if n == 1 else spell[min(n, MAX_COUNT) - 1].format(t) for t, n in counts.items()
    ])
    return (vector if len(vector) <= MAX_WORDS else None), len(found), split, counts


#: :func:`lexeme`'s cache (an agent's transcript repeats its terms); emptied when full
_LEXEMES: dict[str, str] = {}


def lexeme(term: str) -> str:
    """A term as the words column spells it: 8 characters of ``[a-z2-7]`` naming it (40 bits
    of a digest, the history index's words table's spelling), whatever its characters and
    length, so that no term needs quoting or passes a lexeme's size."""
    raw = hashlib.blake2b(term.encode("utf-8", "surrogatepass"), digest_size=5).digest()
    token = base64.b32encode(raw).decode("ascii").lower()
    if len(_LEXEMES) >= 1 << 17:
        _LEXEMES.clear()
    _LEXEMES[term] = token
    return token


#: a token (``{0}``) and its count's lexemes, by ``count - 1``
_SPELLINGS = [
    " ".join(["{0}", *(f"{{0}}{k}" for k in range(COUNT_BITS) if extra >> k & 1)])
    for extra in range(MAX_COUNT)
]


def prepare(
    raws: Iterable[bytes], *, pos: int, off: int, window_id: str, win: int = ROOT_POS
) -> tuple[list[Prepared], str, int]:
    """Column values for consecutive lines (without their newline) starting at ``pos`` and
    byte offset ``off`` in people's window ``window_id`` and the agent's window ``win``;
    also returns both windows after them."""
    out: list[Prepared] = []
    for raw in raws:
        row = parse_line(raw) if len(raw) <= MAX_LINE else None
        people: str | None = None
        item: str | None = None
        seq: int | None = None
        boundary = row is not None and is_boundary(row)
        if row is not None:
            if boundary:
                window_id = window_id_of_boundary(row)
            people = people_text(row)
            item = item_id(row)
            seq = row.sequence
        body = None if people is None else searchable(people)
        agent = agent_of(raw, pos=pos, off=off, win=win, people=people)
        win = agent.win
        out.append(
            Prepared(pos, off, raw, seq, item, mentions_reset_key(raw), window_id, body, agent,
                     boundary)
        )
        pos += 1
        off += len(raw) + 1
    return out, window_id, win


_LIKE_SPECIAL = re.compile(r"([\\%_])")


def like_pattern(query: str) -> str:
    """A LIKE pattern matching ``query`` literally anywhere."""
    return "%" + _LIKE_SPECIAL.sub(r"\\\1", searchable(query)) + "%"
