"""Which store holds a workspace's transcript: the JSONL files under the home, or the
PostgreSQL database a ``postgresql://`` URL names (``--store`` or the ``store.url`` setting,
SPEC.md §8). The PostgreSQL store and psycopg are imported only when a URL asks for them."""

from __future__ import annotations

from segue._errors import UsageError
from segue._history.protocol import MaintainedStore
from segue._history.store import HistoryStore
from segue._workspace import Layout


def is_store_url(url: str) -> bool:
    return url.startswith(("postgresql://", "postgres://"))


def check_store_url(url: str) -> str:
    if not is_store_url(url):
        raise UsageError(f"unsupported store {url!r}: expected a postgresql:// URL")
    return url


def open_store(layout: Layout, url: str | None, *, durable: bool = True) -> MaintainedStore:
    """The store of ``layout``'s workspace: JSONL when ``url`` is None. Both kinds are
    :class:`MaintainedStore`s; a caller that only appends and reads needs no more than
    the core :class:`~segue._history.protocol.TranscriptStore`."""
    if url is None:
        return HistoryStore(layout, durable=durable)
    from segue.postgres._store import PostgresStore

    return PostgresStore(check_store_url(url), layout.workspace_id)
