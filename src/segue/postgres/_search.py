"""``segue history search`` over the PostgreSQL store: candidates from the rows' literal
tokens (``store.search_lines``, :mod:`segue.postgres._lexicon`), each confirmed on its row
with the very matching rule of :func:`segue._views.windows.search`, so both stores answer
alike and no table is scanned in Python."""

from __future__ import annotations

import re
from collections.abc import Iterator

from segue._context.boundaries import item_id
from segue._errors import UsageError
from segue._views.project import display
from segue._views.windows import Hit, Item, snippet
from segue.postgres._store import PostgresStore


def search(store: PostgresStore, query: str, *, context: int = 60) -> Iterator[Hit]:
    if not query:
        raise UsageError("the search query must not be empty")
    pattern = re.compile(re.escape(query), re.IGNORECASE)
    for found in store.search_lines(query):
        row = found.line.row
        if row is None:
            continue
        view = display(row)
        matches = list(pattern.finditer(view.text))
        if matches:
            first = matches[0]
            yield Hit(
                Item(item_id(row), found.window_id, row, view),
                len(matches),
                snippet(view.text, first.start(), first.end(), context),
            )
