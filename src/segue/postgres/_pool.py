"""A connection pool shared by the PostgreSQL stores of one process (psycopg-pool)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from segue._errors import UsageError
from segue.postgres._schema import ensure_schema

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

_POOLS: dict[str, ConnectionPool[Any]] = {}
_POOLS_LOCK = threading.Lock()


def shared_pool(url: str, *, max_size: int = 10, timeout: float = 30.0) -> ConnectionPool[Any]:
    """The process's connection pool for ``url`` (created on first use): hand it to every
    :class:`PostgresStore` of the process (``PostgresStore(url, ws, pool=shared_pool(url))``)
    so many agents share ``max_size`` connections. Connections are autocommit and never
    prepare statements, so the pool also works through PgBouncer in transaction mode."""
    with _POOLS_LOCK:
        pool = _POOLS.get(url)
        if pool is None or pool.closed:
            try:
                from psycopg_pool import ConnectionPool
            except ImportError:
                raise UsageError(
                    "a shared PostgreSQL pool needs psycopg-pool: pip install 'segue[postgres]'"
                ) from None
            pool = ConnectionPool(
                url,
                min_size=1,
                max_size=max_size,
                timeout=timeout,
                kwargs={"autocommit": True, "prepare_threshold": None},
                configure=_configure,
                open=True,
            )
            _POOLS[url] = pool
        return pool


def _configure(conn: psycopg.Connection[Any]) -> None:
    from segue.postgres._binary import register

    register(conn)
    ensure_schema(conn)


__all__ = ["shared_pool"]
