"""Realistic transcript rows for benchmarks: the recorded agent runs, varied and repeated.

The rows are the sample SWE-agent trajectories (``../shared/samples/swe-agent-trajectories``,
or SEGUE_SAMPLES; the trajectories packaged with the demo when neither exists) converted as
the demo converts them: user and system prompts, assistant text, tool calls with their inputs
and outputs (code, logs, tracebacks, file views) in one assistant row. Pass ``r`` of the
corpus varies every string of every message before conversion, so rows are never repeated:

* every number is shifted by ``r`` (line numbers, sizes, addresses, exit codes);
* a seeded tenth of the corpus's words is swapped for other words of the corpus (identifiers
  and prose alike, consistently within one pass);
* ids get the pass's prefix.

A rollover boundary starts a new window every ~400 KB of transcript, as a long session's
rollovers do. :func:`describe` says which runs and how many rows were used.
"""

from __future__ import annotations

import json
import os
import random
import re
from collections.abc import Iterator, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from segue._messages import Row

_SAMPLES = Path(
    os.environ.get(
        "SEGUE_SAMPLES",
        Path(__file__).resolve().parents[2] / "shared" / "samples" / "swe-agent-trajectories",
    )
)
_FALLBACK = Path("/work/shared/samples/swe-agent-trajectories")
_NUMBER = re.compile(r"\d+")
_WORDISH = re.compile(r"[A-Za-z]{4,}")
#: Fields that name things the conversion matches up (roles, call ids, tool names): kept.
_KEEP = frozenset({"role", "tool_call_ids", "id", "type", "name", "is_demo"})
WINDOW_BYTES = 400_000


@lru_cache(maxsize=1)
def corpus() -> tuple[tuple[str, tuple[Mapping[str, Any], ...]], ...]:
    """(name, history messages) of every readable recorded run, sorted by name."""
    from segue._demo.trajectory import load_packaged, packaged_names, parse_trajectory

    folder = _SAMPLES if _SAMPLES.is_dir() else _FALLBACK
    if folder.is_dir():
        runs = [
            parse_trajectory(p.read_bytes(), p.name.removesuffix(".traj"))
            for p in sorted(folder.glob("*.traj"))
        ]
    else:
        runs = [load_packaged(n) for n in packaged_names()]
    return tuple((t.name, t.messages) for t in runs)


@lru_cache(maxsize=1)
def _vocabulary() -> tuple[str, ...]:
    words: set[str] = set()
    for _, messages in corpus():
        words.update(_WORDISH.findall(json.dumps(messages)))
    return tuple(sorted(words))


def _variant(value: Any, r: int, swap: Mapping[str, str], key: str = "") -> Any:
    if key in _KEEP:
        return value
    if isinstance(value, str):
        if r == 0:
            return value
        if key == "arguments":  # JSON in a string: vary what it holds, not its syntax
            try:
                return json.dumps(_variant(json.loads(value), r, swap), ensure_ascii=False)
            except ValueError:
                return value
        text = _NUMBER.sub(lambda m: str(int(m.group()) + r), value)
        return _WORDISH.sub(lambda m: swap.get(m.group(), m.group()), text)
    if isinstance(value, list):
        return [_variant(v, r, swap, key) for v in value]
    if isinstance(value, dict):
        return {k: _variant(v, r, swap, k) for k, v in value.items()}
    return value


def _swap(r: int) -> dict[str, str]:
    if r == 0:
        return {}
    vocab = _vocabulary()
    rng = random.Random(r)
    chosen = rng.sample(vocab, len(vocab) // 10)
    targets = chosen[:]
    rng.shuffle(targets)
    return dict(zip(chosen, targets, strict=True))


def rows(tag: str, *, start_pass: int = 0) -> Iterator[Row]:
    """Rows without end: pass after pass of the corpus, each pass varied (see the module)."""
    from segue._demo.trajectory import trajectory_rows
    from segue._errors import TrajectoryFormatError

    r = start_pass
    start_ms = 1_700_000_000_000
    while True:
        swap = _swap(r)
        for n, (_name, messages) in enumerate(corpus()):
            varied = [_variant(m, r, swap) for m in messages]
            try:
                converted = trajectory_rows(
                    varied, prefix=f"{tag}-p{r}-r{n}", start_ms=start_ms, actions_as_tools=True
                )
            except TrajectoryFormatError:
                continue
            start_ms += (len(converted) + 1) * 1000
            yield from converted
        r += 1


def boundary(tag: str, n: int) -> Row:
    """A rollover boundary (a new window, never a floor: it validates strictly, R11) for the
    ``n``-th window of a filled history."""
    from segue._context.rollover import boundary_row

    return boundary_row(
        row_id=f"{tag}-window-{n}",
        rollover_id=f"{tag}-rollover-{n}",
        reason="on-send",
        # a window id as the store names windows: the root's, or the previous boundary's
        # (a malformed one makes the row a manual reset, a privacy floor that hid everything
        # before it from look-back)
        previous_window_id="w:0" if n <= 1 else f"w:m:{tag}-window-{n - 1}",
        context_tokens=150_000,
        max_tokens=200_000,
        now_ms=1_700_000_000_000 + n,
    )


def describe() -> str:
    """Which rows a benchmark built its histories from."""
    from segue._demo.trajectory import trajectory_rows
    from segue._errors import TrajectoryFormatError

    used: list[str] = []
    count = size = 0
    for name, messages in corpus():
        try:
            converted = trajectory_rows(messages, prefix="x", actions_as_tools=True)
        except TrajectoryFormatError:
            continue
        used.append(name.split("__")[0])
        count += len(converted)
        size += sum(len(json.dumps(m)) for m in messages)
    return (
        f"rows: {count} per pass from {len(used)} recorded agent runs ({size / 1e6:.1f} MB of "
        f"messages: {', '.join(used)}), each pass varied (numbers shifted, a tenth of the words "
        f"swapped), a rollover window every {WINDOW_BYTES // 1000} KB"
    )
