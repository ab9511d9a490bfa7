"""The PostgreSQL store (SPEC.md §8): everything that speaks SQL, in one package above the
store seam (:mod:`segue._history.protocol`) and look-back (:mod:`segue._retrieval`).

* :mod:`~segue.postgres._store` — :class:`PostgresStore`, a :class:`TranscriptStore`;
* :mod:`~segue.postgres._schema`, :mod:`~segue.postgres._pool` — tables, connections, the pool;
* :mod:`~segue.postgres._append`, :mod:`~segue.postgres._rows`, :mod:`~segue.postgres._derive` —
  the append path and the columns derived from each line's bytes;
* :mod:`~segue.postgres._snapshot` — a reader's consistent view;
* :mod:`~segue.postgres._backend`, :mod:`~segue.postgres._pages`,
  :mod:`~segue.postgres._history_tool`, :mod:`~segue.postgres._search` — look-back in SQL;
* :mod:`~segue.postgres._migrate` — ``history migrate`` both ways;
* :mod:`~segue.postgres._watch` — ``LISTEN``/``NOTIFY`` for ``history follow``.

psycopg is imported only inside functions, so importing this package costs nothing.
"""

from typing import TYPE_CHECKING

from segue._lazy import listing, load

if TYPE_CHECKING:  # what type checkers see; at run time each name loads on first use
    from segue.postgres._pool import shared_pool
    from segue.postgres._store import PostgresStore

#: Public name → its module (psycopg loads only when one of them is used).
_LAZY: dict[str, str] = {
    "PostgresStore": "segue.postgres._store",
    "shared_pool": "segue.postgres._pool",
}

__all__ = ["PostgresStore", "shared_pool"]


def __getattr__(name: str) -> object:
    return load(__name__, _LAZY, name)


def __dir__() -> list[str]:
    return listing(globals(), _LAZY)
