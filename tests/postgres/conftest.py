"""Fixtures of the PostgreSQL store tests: the run's throwaway cluster (see cluster.py)."""

from tests.postgres.cluster import pg_cluster, pg_url

__all__ = ["pg_cluster", "pg_url"]
