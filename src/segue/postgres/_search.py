"""``segue history search`` over the PostgreSQL store: candidates from the rows' literal
tokens (:func:`segue.postgres._lexicon.people_where`), each confirmed on its row with the
very matching rule of :func:`segue._views.windows.search`, so both stores answer alike and no
table is scanned in Python.

A line over 1 MiB is stored without being parsed (``body`` is NULL), yet a person's views
read it whole: such lines (``plen`` :data:`~segue.postgres._rows.PLEN_READ`) are always
read and matched too. When one of them opens a window, which the ``window_id`` column never
saw, or the rows were derived by another version of segue (``plen`` may be missing), the
search gives way (:class:`WalkInstead`) and the caller walks every row.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from segue._context.boundaries import is_boundary, item_id
from segue._errors import UsageError
from segue._history.scan import MAX_LINE, parse_line
from segue._views.project import display
from segue._views.windows import Hit, Item, snippet, walk
from segue.postgres._derive import fingerprint
from segue.postgres._lexicon import people_where
from segue.postgres._schema import translated
from segue.postgres._store import PostgresStore

#: the lines read whatever the query: too long to parse when stored (rows.PLEN_READ, spelled
#: as the partial index ``segue_rows_pread`` is, so that it serves)
_LONG = f"(plen < 0 AND length > {MAX_LINE + 1})"


class WalkInstead(Exception):
    """The stored columns cannot answer this search: walk every row."""


def search(store: PostgresStore, query: str, *, context: int = 60) -> Iterator[Hit]:
    """The hits, oldest first; :class:`WalkInstead` (before any hit) where the columns cannot
    answer. Read it to its end: the snapshot is held until then."""
    if not query:
        raise UsageError("the search query must not be empty")
    pattern = re.compile(re.escape(query), re.IGNORECASE)
    with store.snapshot() as snap:
        if snap.state.next_pos and snap.state.derived != fingerprint():
            raise WalkInstead("rows derived by another version")
        with translated("cannot search the transcript", store.url):
            where, params = people_where(snap.conn, store.workspace_id, query)
        hits: list[Hit] = []
        for found in snap.lines(f"({where}) OR {_LONG}", params, "ASC"):
            row = found.line.row
            if row is None and len(found.raw) > MAX_LINE:
                row = parse_line(found.raw)  # whole, as a person's views read it
                if row is not None and is_boundary(row):
                    raise WalkInstead(f"a line too long to parse opens a window at {found.pos}")
                if row is None or not any(isinstance(e, Item) for e in walk([row])):
                    continue
            if row is None:
                continue
            view = display(row)
            matches = list(pattern.finditer(view.text))
            if matches:
                first = matches[0]
                hits.append(Hit(
                    Item(item_id(row), found.window_id, row, view),
                    len(matches),
                    snippet(view.text, first.start(), first.end(), context),
                ))
    yield from hits
