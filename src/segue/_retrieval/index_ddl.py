"""The history index's tables (SPEC.md §7, R35) and their version. Pure data.

What the index stores, and why it stays small (SPEC.md §6: at most 1.25× the transcript):

* ``rows``: one record per physical line, *without* its text. Every answer re-reads a row
  from the transcript and checks its length and digest anyway (§7 "Answers"), so a stored
  copy could only pre-filter candidates; it cost more than the transcript's own bytes.
* ``lit``: the literal search's candidates (R23). Each item's projected text and people's
  text, tokenized by FTS5's ``ascii`` tokenizer (a token: a run of ASCII letters and digits
  and non-ASCII characters; ASCII case folded), rowids only. ``index_query`` turns a literal
  query into terms whose rows must hold it, and every candidate is verified on its re-read
  text, so the answer is exact.
* ``lex`` and ``lexgrams``: every distinct ``lit`` token of at most :data:`LEX_MAX`
  characters, with a trigram index over them, to find the tokens a query's piece can lie
  inside (a suffix or a substring of a token). A longer token is kept as its overlapping
  windows of :data:`LEX_MAX` characters (in ``lit`` and ``lex``), and its row (``risky =
  3``) is read for every query with a piece longer than half of that.
* ``words``: R39's words search, each item's terms (``ranking.index_terms``), ranked with
  ``bm25()``. It keeps FTS5's default ``detail=full`` although ``bm25()`` reads only term
  frequencies and document lengths: on a contentless table FTS5 finds a row's term
  frequencies in its position lists, so with ``detail='column'`` or ``'none'`` (SQLite 3.40)
  every ``bm25()`` is 0 and the ranking falls back to newest first (measured on
  ``bench.bench_lookback_quality``: hit@1/@3/@10 from 42/72/92 % to 0/0/8 %). Positions cost
  about 0.25x the transcript in size and 2 ms of the table's 15 ms of inserts per MB.
* ``pwords`` and ``rows.plen``: a person's ``history search --words`` (their own view of every
  row, :mod:`segue._retrieval.index_people_words`). ``plen`` is the number of terms of the
  row's people's text (NULL: hidden from people, or a text SQLite could not hold as it is,
  which is analysed when it is read); ``pwords`` holds, as ``words`` stores terms, the distinct
  terms of the people's text that the agent's text (its ``words`` row) lacks: most rows show
  people what the agent reads, so it stays small, and an item holding a query's term in
  people's text is in ``words`` or ``pwords``.
"""

from __future__ import annotations

#: Bump whenever the DDL or what a line becomes in the index (the projection, the people's
#: view, the floor and boundary rules, the row kinds and flags, the tokens of ``lit``,
#: ``lex`` and ``words``) changes: an index of another version is rebuilt.
#: tests/index/test_schema_version.py pins a digest of both, so a change without a bump fails
#: there.
SCHEMA_VERSION = 8
#: pending FTS5 data a transaction holds in memory before it writes a segment (8 MiB)
HASH_BYTES = 8 << 20
#: the longest token ``lex`` keeps (a row with a longer one is always a literal candidate)
LEX_MAX = 256

DDL = f"""
CREATE TABLE meta (k TEXT PRIMARY KEY, v TEXT) WITHOUT ROWID;
CREATE TABLE rows (
    pos INTEGER PRIMARY KEY,   -- global position: archive bytes, then chat bytes
    len INTEGER NOT NULL,      -- bytes including the newline
    digest BLOB,               -- blake2b-128 of the line without its newline (parsed lines)
    kind INTEGER NOT NULL,     -- KIND_*
    win INTEGER NOT NULL,      -- pos of the boundary starting this row's window (ROOT_POS)
    wid BLOB NOT NULL,         -- items: their window id; boundaries and floors: their own
    wkind TEXT,                -- boundaries and floors: rollover | reset | compaction
    item BLOB, rid BLOB,       -- ids as UTF-8 with lone surrogates kept (see ``id_bytes``)
    role TEXT, tools TEXT, ts INTEGER,
    vkind INTEGER NOT NULL,    -- VIEW_*
    hwin BLOB,                 -- people's window id (views: parseable boundaries only)
    risky INTEGER NOT NULL,    -- always a literal candidate when > 0: 1, the text holds a
                               -- letter re.IGNORECASE folds onto ASCII (K, ſ, İ, ı); 2, it
                               -- held a lone surrogate; 3, a token longer than LEX_MAX
    mach INTEGER NOT NULL,     -- 1: a machine-authored item (ranks below people's text)
    plen INTEGER               -- people's text: its number of terms (NULL: see above)
);
CREATE INDEX rows_kind ON rows(kind, pos);
CREATE INDEX rows_win ON rows(win, pos) WHERE kind = 0;
CREATE INDEX rows_item ON rows(item) WHERE kind = 0;
CREATE INDEX rows_rid ON rows(rid) WHERE kind = 0;
CREATE INDEX rows_wid ON rows(wid) WHERE kind IN (1, 2);
CREATE INDEX rows_risky ON rows(pos) WHERE risky > 0;
-- the rows every literal query reads (risky 1 and 2): a query without a long piece finds
-- them without visiting the long-token rows (about 16 per MB of agent rows)
CREATE INDEX rows_risky_text ON rows(pos) WHERE risky > 0 AND risky < 3;
-- the rows people see whose terms a person's words search works out when it reads them
CREATE INDEX rows_people_unknown ON rows(pos) WHERE vkind != 0 AND plen IS NULL;
-- the lines too long for the index to parse (people's searches read them themselves)
CREATE INDEX rows_unparsed ON rows(pos) WHERE digest IS NULL;
-- the agent's text and people's text of each row, as tokens without positions
CREATE VIRTUAL TABLE lit USING fts5(body, content='', tokenize='ascii', detail='none',
    columnsize=0);
CREATE TABLE lex (id INTEGER PRIMARY KEY, term TEXT NOT NULL UNIQUE);
CREATE VIRTUAL TABLE lexgrams USING fts5(term, content='', tokenize='trigram', detail='none',
    columnsize=0);
-- R39's words search: each item's terms (``ranking.index_terms``), ranked with bm25()
CREATE VIRTUAL TABLE words USING fts5(terms, content='', tokenize='ascii');
-- a person's words search: the terms of people's text that the row's ``words`` lacks
CREATE VIRTUAL TABLE pwords USING fts5(terms, content='', tokenize='ascii', detail='none',
    columnsize=0);
-- a rebuild writes each table's terms in few large segments, not in many small ones merged
-- again and again (as fast again, a quarter smaller; HASH_BYTES bounds the memory)
INSERT INTO lit (lit, rank) VALUES ('hashsize', {HASH_BYTES});
-- this file's own name, for a process's memory of the lines whose tokens it holds
INSERT INTO meta (k, v) VALUES ('lexicon', lower(hex(randomblob(16))));
INSERT INTO words (words, rank) VALUES ('hashsize', {HASH_BYTES});
INSERT INTO pwords (pwords, rank) VALUES ('hashsize', {HASH_BYTES});
"""  # noqa: S608 (a constant of this module)
