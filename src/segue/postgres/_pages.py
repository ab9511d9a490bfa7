"""``session_history`` pages answered in SQL from the PostgreSQL store (R23-R27, R35, R36).

Runs inside one REPEATABLE READ snapshot (history_tool.py), over the agent's columns every
row was stored with (``rows.Agent``: the scan's own classification of each line). The
pages are those of the JSONL store's history index (``retrieval.index_pages``), step for
step, so both stores answer alike:

* the floor is the newest floor candidate in the snapshot (:func:`floor_pos`); only rows
  after it are considered (a window starting *at* the floor is visible);
* a literal ``search`` (R23) takes its candidates from each row's literal tokens (``lit``,
  GIN indexed; :mod:`segue.postgres._lexicon` turns the query's pieces into the lexemes
  they can be, through the workspace's vocabulary), plus the ``risky`` rows and, for a long
  piece, the rows holding a token longer than the index keeps whole; every candidate is
  matched on its row read again, so the answer is exactly the scan's. A query no piece of
  which narrows the search (no ASCII letter or digit, only pieces shorter than a trigram, or
  pieces too common to help) walks the items in order, each examined row counted against
  R24's bound as the history index counts it. Filters (R36) are part of the ``WHERE``;
* a words search (R39) takes its candidates from the ``words`` column's GIN index and, in
  relevance order, ranks them with BM25 in SQL (:mod:`segue.postgres._words`): the best
  :data:`RANKED` items above the floor as of the first page, then every other hit newest
  first, as the history index does; the ranked positions live in the cursor's state;
* order and limits: newest or oldest first by ``pos``; a page ends at the limit or at the
  first entry that would not fit the 16 KiB result, where the index's pages end;
* every returned row is read again from the table (its bytes) and classified again; those
  reads are what ``scanned`` counts and what R24's budget bounds, as on disk (R35);
* cursors hold a keyset bound (a ``pos``), which a verified append never moves.

SQL text is put together only from fixed fragments; every value is a bound parameter.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from segue._context.boundaries import ROOT_WINDOW_ID
from segue._context.floor import mentions_reset_key
from segue._history.scan import MAX_LINE
from segue._retrieval import page_entries, pages, pages_read
from segue._retrieval.cursor import CursorState
from segue._retrieval.project import Kind, Seen, classify
from segue._retrieval.reader import RawLine
from segue.postgres import _lexicon as lexicon
from segue.postgres import _words as sql_words
from segue.postgres._rows import (
    KIND_FLOOR,
    ROOT_POS,
    TOOL_SEP,
    id_bytes,
    id_str,
    searchable,
    storable,
)

if TYPE_CHECKING:
    import psycopg

_TOP = 1 << 62  # above every position
_BOTTOM = ROOT_POS - 1  # below every position, the root window's included
_RAW_ID = re.compile("w:raw:(0|[1-9][0-9]*)")
#: candidates fetched per query beyond what the page can still show, after the first query
#: (which fetches only as many as the page can show: a candidate is nearly always a hit, and
#: a common string's candidates are found walking ``pos`` newest first, where every row
#: walked past has its literal tokens read and tested: :func:`_candidates`)
_SLACK = 8
#: the window of a row: its boundary's id, or that boundary's end when it has none
_JOIN = (
    " LEFT JOIN segue_rows b ON b.workspace = r.workspace AND b.pos = r.win"
)
_WINDOW = "b.wid, b.off + b.length"
#: the phases of this module's cursors
PHASES = ("pg", "item")
#: a relevance search ranks this many of the best items first, then the rest newest first
#: (as the history index does)
RANKED = 250


@dataclass
class Sql:
    """One call's view of the table: the snapshot's connection and the workspace's floor."""

    conn: psycopg.Connection[Any]
    workspace: str
    floor: int
    #: rows read ahead in one query (pos -> off, raw), taken by the page that reads them
    ahead: dict[int, tuple[int, bytes]] = field(default_factory=dict)
    #: a literal search's candidates (:func:`segue.postgres._lexicon.literal`), once known
    literal: lexicon.LitQuery | None = None

    def rows(self, sql: str, args: list[Any]) -> list[tuple[Any, ...]]:
        return self.query(sql, [self.workspace, *args])

    def query(self, sql: str, args: list[Any] | dict[str, Any]) -> list[tuple[Any, ...]]:
        """The rows of ``sql`` with exactly ``args`` (the workspace among them)."""
        return list(self.conn.execute(sql, args).fetchall())

    def one(self, sql: str, args: list[Any]) -> tuple[Any, ...] | None:
        got: tuple[Any, ...] | None = self.conn.execute(sql, [self.workspace, *args]).fetchone()
        return got


def floor_pos(conn: psycopg.Connection[Any], workspace: str, since: int = 0) -> int:
    """``pos`` of the newest floor candidate at or after ``since``, or ROOT_POS."""
    got = conn.execute(
        "SELECT max(pos) FROM segue_rows WHERE workspace = %s AND kind = %s AND pos >= %s",
        (workspace, KIND_FLOOR, since),
    ).fetchone()
    return int(got[0]) if got is not None and got[0] is not None else ROOT_POS


def window_id(win: int, wid: bytes | None, end: int | None) -> str:
    """The id of the window starting at ``win`` from its boundary's columns."""
    if win == ROOT_POS:
        return ROOT_WINDOW_ID
    return id_str(wid) if wid is not None else f"w:raw:{end}"


# -- reading rows again ----------------------------------------------------------------------


class _OutOfBudget(Exception):
    pass


def _reread(ctx: pages.Ctx, sql: Sql, pos: int, length: int, *, check: bool = True) -> Seen:
    """The row at ``pos`` read from the table and classified, counted against R24's budget
    (``check``: only if it fits what is left of it)."""
    budget = ctx.budget
    if check and (budget.rows_left == 0 or length > budget.bytes_left):
        raise _OutOfBudget
    got = sql.ahead.pop(pos, None) or sql.one(
        "SELECT off, raw FROM segue_rows WHERE workspace = %s AND pos = %s", [pos]
    )
    budget.bytes += length
    budget.rows += 1
    if got is None:
        raise pages.PageFailure("history_changed", "the row changed while it was read; call again")
    off, raw = int(got[0]), bytes(got[1])
    line = RawLine(
        off, off + len(raw) + 1, raw if len(raw) <= MAX_LINE else None,
        mentions_reset_key(raw), True,
    )
    return classify(line)


def _fetch(
    ctx: pages.Ctx, sql: Sql, inner: str, args: list[Any], order: str
) -> list[tuple[int, int, str]]:
    """(pos, length, window id) of the rows ``inner`` selects (its columns: pos, length,
    win, wid, wend, off, raw), in ``order``; the first rows the page is about to read again
    come with their bytes in the same round trip (as many as the call's budget, R24, and
    the page's limit leave room for: nothing the bound would not let the page read), kept
    in ``sql.ahead`` for :func:`_reread`."""
    budget = ctx.budget
    room, count = budget.bytes_left, min(budget.rows_left, ctx.req.limit)
    got = sql.query(
        "SELECT s.pos, s.length, s.win, s.wid, s.wend, s.off, CASE WHEN sum(s.length)"  # noqa: S608
        " OVER w <= %s AND row_number() OVER w <= %s THEN s.raw END"
        f" FROM ({inner}) s WINDOW w AS (ORDER BY {order}) ORDER BY {order}",
        [room, count, *args],
    )
    return _taken(sql, got)


def _taken(sql: Sql, got: Iterable[tuple[Any, ...]]) -> list[tuple[int, int, str]]:
    """(pos, length, window id) of rows fetched as :func:`_fetch` fetches them (pos, length,
    win, wid, wend, off, raw: the bytes of those read ahead, kept in ``sql.ahead``)."""
    out = []
    for pos, length, win, wid, end, off, raw in got:
        if raw is not None:
            sql.ahead[int(pos)] = (int(off), bytes(raw))
        out.append((int(pos), int(length), window_id(int(win), wid, end)))
    return out


def _ahead(ctx: pages.Ctx) -> tuple[str, dict[str, Any]]:
    """The lateral join (and its named parameters) that fetches, in the ranking's own
    statement, the first ``limit + _SLACK`` ranked rows (``top.best``) as :func:`_fetch`
    does: :func:`_located` takes them instead of asking again."""
    budget = ctx.budget
    sql = (
        " LEFT JOIN LATERAL (SELECT s.pos, s.length, s.win, s.wid, s.wend, s.off,"  # noqa: S608
        " CASE WHEN sum(s.length) OVER w <= %(room)s AND row_number() OVER w <= %(count)s"
        f" THEN s.raw END AS raw, s.n FROM (SELECT {_FETCHED}, u.n FROM"
        " unnest(top.best[1:%(chunk)s]) WITH ORDINALITY AS u(p, n) JOIN segue_rows r"
        f" ON r.workspace = %(ws)s AND r.pos = u.p{_JOIN}) s WINDOW w AS (ORDER BY s.n)) a"
        " ON true ORDER BY a.n"
    )
    return sql, {
        "room": budget.bytes_left, "count": min(budget.rows_left, ctx.req.limit),
        "chunk": ctx.req.limit + _SLACK,
    }


#: what :func:`_fetch` selects of a row ``r`` and its window's boundary ``b``
_FETCHED = "r.pos, r.length, r.win, b.wid, b.off + b.length AS wend, r.off, r.raw"


def _item(ctx: pages.Ctx, sql: Sql, pos: int, length: int, *, check: bool = True) -> Seen:
    seen = _reread(ctx, sql, pos, length, check=check)
    if seen.kind is not Kind.ITEM or seen.item is None:
        raise pages.PageFailure(
            "history_changed", "the transcript's rows changed while they were read; call again"
        )
    return seen


def _filters(ctx: pages.Ctx) -> tuple[str, list[Any]]:
    text, args = "", []
    if ctx.req.role is not None:
        text += " AND r.role = %s"
        args.append(ctx.req.role)
    if ctx.req.tool_name is not None:
        text += " AND strpos(r.tools, %s) > 0"
        args.append(storable(TOOL_SEP + ctx.req.tool_name + TOOL_SEP))
    return text, args


def _order(ctx: pages.Ctx) -> tuple[str, str]:
    return ("<", "DESC") if ctx.req.newest_first else (">", "ASC")


def _state(ctx: pages.Ctx, bound: int, win: int = 0) -> CursorState:
    return ctx.state(phase="pg", pos=bound, win=win)


def _at(ctx: pages.Ctx, pos: int, win: int = 0) -> CursorState:
    """A cursor whose next page starts with the row at ``pos``."""
    return _state(ctx, pos + 1 if ctx.req.newest_first else pos - 1, win)


def _note(entries: list[dict[str, Any]]) -> str | None:
    return pages.NOTE_MORE if not entries else None


# -- search ----------------------------------------------------------------------------------


def _candidates(
    ctx: pages.Ctx, sql: Sql, bound: int, *, slack: int = 0
) -> Iterator[tuple[int, int, str]]:
    """(pos, length, window id) of the rows that may hold the query, in the page's order:
    first as many as the page can show plus ``slack``, then a few more than it can show at
    a time."""
    _, direction = _order(ctx)
    narrow, nargs = _filters(ctx)
    if ctx.req.words:  # the items holding a term of the query, and the risky ones
        found = sql_words.tokens(ctx.req.key)
        if not found:
            return
        like = " AND (r.words @@ %s::tsquery OR r.risky)"
        largs = [sql_words.tsquery(found)]
    else:
        if sql.literal is None:  # the query's candidates, looked up once per call
            sql.literal = lexicon.literal(sql.conn, sql.workspace, ctx.req.key)
        if sql.literal.match is None:
            yield from _examined(ctx, sql, bound)
            return
        cond, largs = lexicon.condition(sql.literal)
        like = " AND " + cond
    size = ctx.req.limit + slack
    while True:
        lo, hi = (sql.floor, bound) if ctx.req.newest_first else (bound, _TOP)
        # PostgreSQL plans it: the GIN index for a selective query, a walk along ``pos``
        # (a word most rows hold: the page is a few rows away) otherwise; both in SQL.
        batch = _fetch(
            ctx, sql,
            f"SELECT {_FETCHED} FROM segue_rows r{_JOIN}"  # noqa: S608
            " WHERE r.workspace = %s AND r.kind = 0 AND r.pos > %s AND r.pos < %s"
            f"{like}{narrow} ORDER BY r.pos {direction} LIMIT %s",
            [sql.workspace, lo, hi, *largs, *nargs, size],
            f"s.pos {direction}",
        )
        yield from batch
        if len(batch) < size:
            return
        bound = batch[-1][0]
        size = ctx.req.limit + _SLACK


def _examined(ctx: pages.Ctx, sql: Sql, bound: int) -> Iterator[tuple[int, int, str]]:
    """A literal query no piece of which narrows the search: every item row in the page's
    order, each examined one counted against R24's bound as the history index counts
    it (:func:`segue._retrieval.index_pages._examined`); ``~pos`` says the bound ends before
    the row at ``pos``."""
    _, direction = _order(ctx)
    narrow, nargs = _filters(ctx)
    key = searchable(ctx.req.key)  # what the LIKE of the other path tests, in Python
    budget = ctx.budget
    while True:
        lo, hi = (sql.floor, bound) if ctx.req.newest_first else (bound, _TOP)
        batch = sql.rows(
            f"SELECT r.pos, r.length, r.win, {_WINDOW}, r.abody, r.risky "  # noqa: S608
            f"FROM segue_rows r{_JOIN} WHERE r.workspace = %s AND r.kind = 0 AND r.pos > %s "
            f"AND r.pos < %s{narrow} ORDER BY r.pos {direction} LIMIT 256",
            [lo, hi, *nargs],
        )
        for pos, length, win, wid, end, body, risky in batch:
            where = window_id(int(win), wid, end)
            if risky or (body is not None and key in str(body)):
                yield int(pos), int(length), where
                continue
            if budget.rows_left == 0 or int(length) > budget.bytes_left:
                yield ~int(pos), int(length), where
                return
            budget.bytes += int(length)
            budget.rows += 1
        if len(batch) < 256:
            return
        bound = int(batch[-1][0])


def search(ctx: pages.Ctx, sql: Sql, state: CursorState | None) -> pages.Page:
    """A literal search (the literal tokens' candidates), a words search in relevance order
    (:func:`_ranked`), or one newest or oldest first (the words index's candidates)."""
    if (empty := pages.no_terms(ctx)) is not None:  # a words query without terms
        return empty
    if ctx.req.words and ctx.req.relevance:
        return _ranked(ctx, sql, state)
    find = pages.search_finder(ctx)
    newest = ctx.req.newest_first
    bound = state.pos if state is not None else (_TOP if newest else sql.floor)
    entries: list[dict[str, Any]] = []
    for pos, length, wid in _candidates(ctx, sql, bound):
        if pos < 0:  # the scan bounds are spent before the row at ~pos: go on from there
            return pages.Page(entries, _at(ctx, ~pos), _note(entries))
        try:
            seen = _item(ctx, sql, pos, length)
        except _OutOfBudget:
            return pages.Page(entries, _at(ctx, pos), _note(entries))
        assert seen.item is not None
        span = find(seen.item.text)
        if span is None:  # only a risky row: its search spelling could not be exact
            continue
        entry = page_entries.fit_snippet(ctx, seen.item, wid, span[0], span[1])
        if entry is None:
            return pages.Page(entries, _at(ctx, pos))
        entries.append(entry)
        if len(entries) >= ctx.req.limit:
            return pages.Page(entries, _state(ctx, pos))
    return pages.Page(entries, None)


def _ranked(ctx: pages.Ctx, sql: Sql, state: CursorState | None) -> pages.Page:
    """A words search in rank order: the best :data:`RANKED` items above the floor below
    where the look-back stands (BM25 in SQL), then every other hit newest first below the
    first page's bound. Appends move no position, so they neither repeat nor lose an item;
    what was appended after the first page is not part of the query."""
    find = pages.search_finder(ctx)
    found = sql_words.tokens(ctx.req.key)
    if not found:
        return pages.Page([], None)
    first: list[tuple[int, int, str]] | None = None
    if state is None or (state.rk == 0 and not state.ranked):
        below = _TOP if state is None else state.pos
        tool = ctx.req.tool_name
        ranked, every, rows = sql_words.ranked(
            sql.query, sql.workspace, found, floor=sql.floor, below=below,
            rows_above=ctx.snap.chat_size - sql.floor - 1, role=ctx.req.role,
            tools=None if tool is None else storable(TOOL_SEP + tool + TOOL_SEP),
            limit=RANKED, then=_ahead(ctx),
        )
        first = _taken(sql, (row[:7] for row in rows))  # without the rank (n)
        # every candidate ranked: nothing is left for the tail (its bound is the floor)
        state = ctx.state(phase="pg", pos=sql.floor if every else below, ranked=ranked, rk=0)
    ranked, rk, bound = state.ranked, state.rk, state.pos
    chosen = frozenset(ranked)
    queue = _located(ctx, sql, [(i, p) for i, p in enumerate(ranked) if i >= rk], first)
    tail = (
        (len(ranked), *c)
        for c in (_candidates(ctx, sql, bound, slack=_SLACK) if bound > sql.floor else ())
        if c[0] not in chosen
    )
    entries: list[dict[str, Any]] = []
    for index, pos, length, wid in itertools.chain(queue, tail):
        at_tail = index >= len(ranked)
        try:
            seen = _item(ctx, sql, pos, length)
        except _OutOfBudget:
            at = ctx.state(phase="pg", pos=pos + 1 if at_tail else bound, ranked=ranked, rk=index)
            return pages.Page(entries, at, _note(entries))
        assert seen.item is not None
        span = find(seen.item.text)
        if span is None:  # a risky row, or two terms sharing a token
            continue
        entry = page_entries.fit_snippet(ctx, seen.item, wid, span[0], span[1])
        if entry is None:
            at = ctx.state(phase="pg", pos=pos + 1 if at_tail else bound, ranked=ranked, rk=index)
            return pages.Page(entries, at)
        entries.append(entry)
        if len(entries) >= ctx.req.limit:
            at = ctx.state(phase="pg", pos=pos if at_tail else bound, ranked=ranked, rk=index + 1)
            return pages.Page(entries, at)
    return pages.Page(entries, None)


def _located(
    ctx: pages.Ctx,
    sql: Sql,
    order: Iterable[tuple[int, int]],
    first: list[tuple[int, int, str]] | None = None,
) -> Iterator[tuple[int, int, int, str]]:  # the ranked rows, which a query named by pos
    """(index, pos, length, window id) of each (index, pos) of ``order``, looked up a page
    at a time, the rows read ahead; ``first``: the first page's rows, already fetched with
    the ranking (:func:`_ahead`)."""
    it = iter(order)
    while chunk := list(itertools.islice(it, ctx.req.limit + _SLACK)):
        fetched = first if first is not None else _fetch(
            ctx, sql,
            f"SELECT {_FETCHED}, u.n FROM unnest(%s::bigint[]) WITH ORDINALITY AS u(p, n)"  # noqa: S608
            f" JOIN segue_rows r ON r.workspace = %s AND r.pos = u.p{_JOIN}",
            [[p for _, p in chunk], sql.workspace],
            "s.n",
        )
        first = None
        got = {pos: (length, wid) for pos, length, wid in fetched}
        for index, pos in chunk:
            if pos in got:
                yield index, pos, *got[pos]


# -- list_items ------------------------------------------------------------------------------


def _window_pos(sql: Sql, target: str) -> int:
    raw = _RAW_ID.fullmatch(target)
    row = sql.one(
        "SELECT pos FROM segue_rows WHERE workspace = %s AND kind IN (1, 2) AND pos >= %s"
        " AND (wid = %s OR (wid IS NULL AND off + length = %s)) ORDER BY pos DESC LIMIT 1",
        [sql.floor, id_bytes(target), int(raw.group(1)) if raw is not None else -1],
    )
    if row is not None:
        return int(row[0])
    if target == ROOT_WINDOW_ID and sql.floor == ROOT_POS:
        return ROOT_POS
    raise pages.PageFailure("window_not_found", f"no window {target!r} above the privacy floor")


def list_items(ctx: pages.Ctx, sql: Sql, state: CursorState | None) -> pages.Page:
    target = ctx.req.key
    win = state.win if state is not None else _window_pos(sql, target)
    cmp, direction = _order(ctx)
    bound = state.pos if state is not None else (_TOP if ctx.req.newest_first else _BOTTOM)
    narrow, nargs = _filters(ctx)
    limit = ctx.req.limit
    found = sql.rows(
        "SELECT r.pos, r.length FROM segue_rows r WHERE r.workspace = %s AND r.kind = 0"  # noqa: S608
        f" AND r.win = %s AND r.pos {cmp} %s{narrow} ORDER BY r.pos {direction} LIMIT %s",
        [win, bound, *nargs, limit + 1],
    )
    entries: list[dict[str, Any]] = []
    for pos, length in found:
        if len(entries) >= limit:
            return pages.Page(entries, _at(ctx, int(pos), win))
        try:
            seen = _item(ctx, sql, int(pos), int(length))
        except _OutOfBudget:
            return pages.Page(entries, _at(ctx, int(pos), win), _note(entries))
        assert seen.item is not None
        entry = page_entries.item_entry(
            seen.item, target, page_entries.preview(seen.item.text, ctx.req.max_chars)
        )
        if not ctx.fits(entry):
            return pages.Page(entries, _at(ctx, int(pos), win))
        entries.append(entry)
    return pages.Page(entries, None)


# -- list_windows ----------------------------------------------------------------------------


def _windows(
    ctx: pages.Ctx, sql: Sql, bound: int
) -> list[tuple[int, int, str, str | None]]:
    """(pos, length, window id, kind) of the windows above the floor after ``bound`` in the
    page's order, at most one more than the page can show; the root window (pos ROOT_POS)
    when there is no floor."""
    cmp, direction = _order(ctx)
    found = sql.rows(
        "SELECT pos, length, wid, off + length, wkind FROM segue_rows"  # noqa: S608
        f" WHERE workspace = %s AND kind IN (1, 2) AND pos >= %s AND pos {cmp} %s"
        f" ORDER BY pos {direction} LIMIT %s",
        [sql.floor, bound, ctx.req.limit + 1],
    )
    out = [(int(p), int(n), window_id(int(p), wid, end), k) for p, n, wid, end, k in found]
    newest = ctx.req.newest_first
    if sql.floor == ROOT_POS and (bound > ROOT_POS if newest else bound < ROOT_POS):
        root = (ROOT_POS, 0, ROOT_WINDOW_ID, "root")
        out = [*out, root] if newest else [root, *out]
    return out


def _window_stats(sql: Sql, win: int) -> tuple[int, str | None, str | None]:
    got = sql.one(
        "SELECT count(*), min(pos), max(pos) FROM segue_rows"
        " WHERE workspace = %s AND kind = 0 AND win = %s",
        [win],
    )
    if got is None or not got[0]:
        return 0, None, None
    ids = dict(
        sql.rows("SELECT pos, aid FROM segue_rows WHERE workspace = %s AND pos IN (%s, %s)",
                 [got[1], got[2]])
    )
    return int(got[0]), id_str(ids[got[1]]), id_str(ids[got[2]])


def list_windows(ctx: pages.Ctx, sql: Sql, state: CursorState | None) -> pages.Page:
    bound = state.pos if state is not None else (_TOP if ctx.req.newest_first else _BOTTOM)
    out: list[dict[str, Any]] = []
    for pos, length, wid, kind in _windows(ctx, sql, bound):
        if pos != ROOT_POS and length - 1 <= MAX_LINE:  # an oversized floor is not read
            try:
                seen = _reread(ctx, sql, pos, length)
            except _OutOfBudget:
                return pages.Page(out, _at(ctx, pos), _note(out))
            if seen.kind not in (Kind.BOUNDARY, Kind.FLOOR):
                raise pages.PageFailure(
                    "history_changed", "the transcript's rows changed while they were read"
                )
        count, first, last = _window_stats(sql, pos)
        entry = pages.window_entry(wid, kind, first, last, count)
        if len(out) >= ctx.req.limit or not ctx.fits(entry):
            return pages.Page(out, _at(ctx, pos))
        out.append(entry)
    return pages.Page(out, None)


# -- read_item -------------------------------------------------------------------------------


def read_item(ctx: pages.Ctx, sql: Sql, state: CursorState | None) -> pages.Page:
    if state is not None:  # phase "item": the next characters of the row located before
        if ctx.req.offset_chars is not None and ctx.req.offset_chars != state.offset:
            raise pages.PageFailure("invalid_argument", "offset_chars differs from the cursor's")
        got = sql.one("SELECT length FROM segue_rows WHERE workspace = %s AND pos = %s",
                      [state.pos])
        if got is None:
            raise pages.PageFailure("history_changed", "the item's row changed; read it again")
        seen = _item(ctx, sql, state.pos, int(got[0]), check=False)
        return pages_read.page_text(
            ctx, state.pos, state.pos, seen, window=state.window, offset=state.offset
        )
    wanted = ctx.req.key
    # one indexed lookup per way of naming a row (an OR of both would read every item)
    named = [("aid", id_bytes(wanted))]
    if wanted.startswith("m:"):
        named.append(("rid", id_bytes(wanted[2:])))
    found = [
        sql.one(
            f"SELECT max(pos) FROM segue_rows WHERE workspace = %s AND kind = 0"  # noqa: S608
            f" AND {column} = %s AND pos > %s",
            [value, sql.floor],
        )
        for column, value in named
    ]
    newest = max((int(f[0]) for f in found if f is not None and f[0] is not None), default=None)
    row = None
    if newest is not None:
        row = sql.one(
            f"SELECT r.length, r.win, {_WINDOW} FROM segue_rows r{_JOIN}"  # noqa: S608
            " WHERE r.workspace = %s AND r.pos = %s",
            [newest],
        )
    if newest is None or row is None:
        raise pages.PageFailure("item_not_found", f"no item {wanted!r} above the privacy floor")
    length, win, wid, end = int(row[0]), int(row[1]), row[2], row[3]
    try:
        seen = _item(ctx, sql, newest, length)
    except _OutOfBudget:  # only when a row is larger than a call's whole budget
        raise pages.PageFailure(
            "invalid_argument", f"item {wanted!r} is larger than one call may read"
        ) from None
    offset = ctx.req.offset_chars if ctx.req.offset_chars is not None else 0
    page = pages_read.page_text(
        ctx, newest, newest, seen, window=window_id(win, wid, end), offset=offset
    )
    page.near = (_state(ctx, newest, win), _state(ctx, newest, win))  # its neighbours' place
    return page


ACTIONS = {
    "list_windows": list_windows,
    "list_items": list_items,
    "search": search,
    "read_item": read_item,
}
