"""The PostgreSQL store (SPEC.md §8): everything that speaks SQL, in one package above the
store seam (:mod:`segue.history.protocol`) and look-back (:mod:`segue.retrieval`).

* :mod:`~segue.postgres.store` — :class:`PostgresStore`, a :class:`TranscriptStore`;
* :mod:`~segue.postgres.schema`, :mod:`~segue.postgres.pool` — tables, connections, the pool;
* :mod:`~segue.postgres.append`, :mod:`~segue.postgres.rows`, :mod:`~segue.postgres.derive` —
  the append path and the columns derived from each line's bytes;
* :mod:`~segue.postgres.snapshot` — a reader's consistent view;
* :mod:`~segue.postgres.backend`, :mod:`~segue.postgres.pages`,
  :mod:`~segue.postgres.history_tool`, :mod:`~segue.postgres.search` — look-back in SQL;
* :mod:`~segue.postgres.migrate` — ``history migrate`` both ways;
* :mod:`~segue.postgres.watch` — ``LISTEN``/``NOTIFY`` for ``history follow``.

psycopg is imported only inside functions, so importing this package costs nothing.
"""
