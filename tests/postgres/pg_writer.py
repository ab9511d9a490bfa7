"""A writer process for the PostgreSQL crash and concurrency tests.

    python -m tests.postgres.pg_writer URL WORKSPACE TAG BATCHES ACK_FILE [PAUSE_FILE]

Appends BATCHES batches (the rows of ``tests.history.writer``: ids ``<tag>-<batch>-<i>-of-<n>``
so a checker can tell from the rows alone whether each batch is whole). After each append
returns, the batch number is appended to ACK_FILE: every number there was acknowledged.
A failed append (the server went away) prints the error's one line on stderr, backs off
briefly and moves on to the next batch number, reconnecting, so a batch id is never
written twice.

With PAUSE_FILE, the writer stops inside its first transaction, after the rows went in and
before the commit, creates PAUSE_FILE and waits there to be killed.
"""

from __future__ import annotations

import random
import sys
import threading
import time
from pathlib import Path
from typing import Any

from segue._errors import StoreError
from segue.postgres import _store as postgres
from segue.postgres._store import PostgresStore
from tests.history.writer import batch_rows


def _pause_inside(pause: Path) -> None:
    """Stop for ever right after a batch's rows are written, inside its open transaction:
    the append takes the path that holds the lock for a whole transaction (the one-statement
    path has no instant between its rows and its commit), and stops after the call that
    stored the rows (a small batch) or after their COPY (a large one)."""
    def wait_there() -> None:
        pause.touch()
        threading.Event().wait()  # killed here, inside the open transaction

    def no_single_statement(self: PostgresStore, *args: Any) -> None:
        return None

    setattr(PostgresStore, "_append_call", no_single_statement)  # noqa: B010
    real_call = getattr(postgres, "call_append")  # noqa: B009 (the name the store calls)

    def call_then_wait(*args: Any) -> Any:
        moved = real_call(*args)
        if moved is None:  # the rows are in
            wait_there()
        return moved

    setattr(postgres, "call_append", call_then_wait)  # noqa: B010
    real_copy = getattr(postgres, "_copy")  # noqa: B009

    def copy_then_wait(*args: Any) -> None:
        real_copy(*args)
        wait_there()

    setattr(postgres, "_copy", copy_then_wait)  # noqa: B010


def main(argv: list[str]) -> int:
    url, workspace, tag, batches, ack = argv[:5]
    if len(argv) > 5:
        _pause_inside(Path(argv[5]))
    store = PostgresStore(url, workspace, lock_timeout=60)
    rng = random.Random(tag)
    failures = 0
    with open(ack, "a", buffering=1) as log:
        for b in range(int(batches)):
            rows = batch_rows(tag, b, rng, rotate=False)
            try:
                store.append(rows)
            except StoreError as exc:
                failures += 1
                print(exc.message, file=sys.stderr, flush=True)
                if failures > 200:
                    return 1
                time.sleep(0.05)  # a client's back-off while the server comes back
                continue
            log.write(f"{b}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
