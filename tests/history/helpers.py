"""Checks shared by the store tests."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable

from segue._messages import Row

_ID = re.compile(r"(?P<tag>.+)-(?P<batch>\d+)-(?P<i>\d+)-of-(?P<n>\d+)")


def check_batches_whole(rows: Iterable[Row]) -> dict[str, set[int]]:
    """Assert every writer batch is whole, in order, unduplicated; sequences strictly
    increasing. Returns tag -> the batch numbers present."""
    seen: dict[tuple[str, int], list[int]] = defaultdict(list)
    sizes: dict[tuple[str, int], int] = {}
    last = -1
    for row in rows:
        seq = row.sequence
        assert seq is not None
        assert seq > last, f"sequence {seq} after {last}"
        last = seq
        m = _ID.fullmatch(row.id)
        assert m, row.id
        key = (m["tag"], int(m["batch"]))
        seen[key].append(int(m["i"]))
        sizes[key] = int(m["n"])
    present: dict[str, set[int]] = defaultdict(set)
    for key, idx in seen.items():
        assert idx == list(range(sizes[key])), f"batch {key} is not whole: {idx}"
        present[key[0]].add(key[1])
    return present
