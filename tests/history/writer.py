"""A writer process for the multi-process and SIGKILL tests.

    python -m tests.history.writer HOME WORKSPACE TAG BATCHES ROTATE_EVERY [READY_FILE]

Appends BATCHES batches of 1-5 rows. Every row's id is ``<tag>-<batch>-<i>-of-<n>`` so a
checker can tell, from the rows alone, whether every batch is whole. Every ROTATE_EVERY-th
batch (0 = never) starts with a reset row, which makes the store rotate. A ready file, if
given, is created after the first acknowledged batch.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

from segue._history.store import HistoryStore
from segue._messages import Row, make_row
from segue._workspace import Layout


def batch_rows(tag: str, batch: int, rng: random.Random, rotate: bool) -> list[Row]:
    n = rng.randint(1, 5)
    rows = []
    for i in range(n):
        rid = f"{tag}-{batch}-{i}-of-{n}"
        if rotate and i == 0:
            rows.append(make_row("assistant", id=rid, metadata={"contextBoundaryKind": "reset"}))
        else:
            text = f"row {rid} " + "lorem ipsum " * rng.randint(0, 400)
            rows.append(make_row("user" if i % 2 == 0 else "assistant", text, id=rid))
    return rows


def main(argv: list[str]) -> int:
    home, workspace, tag, batches, rotate_every = argv[:5]
    ready = Path(argv[5]) if len(argv) > 5 else None
    store = HistoryStore(Layout(Path(home), workspace))
    rng = random.Random(tag)
    every = int(rotate_every)
    for b in range(int(batches)):
        store.append(batch_rows(tag, b, rng, rotate=every > 0 and b % every == every - 1))
        if ready is not None and b == 0:
            ready.touch()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
