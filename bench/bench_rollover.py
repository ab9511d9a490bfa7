"""Engine overhead of a rollover: admission to append, provider excluded (R21).

What is timed is :func:`segue._session.admission.admit_rollover` with a real, durable
``HistoryStore`` and a real ``Session``'s pieces, wired as the turn loop wires them (the
edited-file carryover handoff, the candidate system text, the advertised tool schemas, the
real-encoding count, the cleanup, the batch append and the rotation that seals the old window
into the archive). The provider step that follows is not timed.

Goals:

* **flat across history sizes**: admission at 100 MB of history vs at 1 MB (the cost follows
  the window being sealed, never the archive);
* **below one request assembly of the same window**: the baseline is loading the window
  being sealed, assembling its request and counting it with the real encoding, which the
  engine does at every send anyway; measured side by side, interleaved, on the same window.

The durable figure carries the store's and the carryover's fsyncs (counted and shown in the
note); a second figure times the same admission with ``durable=False`` on the 100 MB history,
which is the engine's own work.

History is realistic agent text (the packaged SWE-agent trajectories), cut into windows of
about ``WINDOW_BYTES`` that each end with a strict rollover batch, as a long session that
rolled over many times leaves it; it is written with ``durable=False`` in large batches. Each
timed round first appends one fresh window (untimed), then times the baseline and the
admission that seals it. Sizes: 1 MB and 100 MB in both scales (building 100 MB takes a few
seconds); ``large`` repeats more.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import msgspec

from bench.common import SCALE, Result
from segue._context.active import active_rows
from segue._context.assembly import current_window_id
from segue._context.rollover import rollover_batch
from segue._history import HistoryStore
from segue._messages import Row, make_row
from segue._policy import resolve_agent
from segue._providers.request import ProviderRequest
from segue._providers.scripted import ScriptedProvider
from segue._session import Cancellation, Session, SessionConfig
from segue._session.admission import RolloverPlan, admit_rollover
from segue._session.window import load_window
from segue._tools.builtin import builtin_tools
from segue._tools.carryover_file import CarryoverFile
from segue._workspace import Layout

MB = 1 << 20
#: A window that filled a 128k-token model to its 75 % trigger holds about this much text.
CONTEXT_WINDOW = 128_000
WINDOW_BYTES = 320 * 1024
BUILD_BATCH_BYTES = 8 * MB
SIZES = (1 * MB, 100 * MB)


def _source_rows() -> list[Row]:
    from segue._demo.trajectory import iter_packaged_rows

    rows = list(iter_packaged_rows(actions_as_tools=True))
    if not rows:
        raise RuntimeError("no packaged trajectories to build rows from")
    return rows


class _Rows:
    """An endless supply of real rows with fresh ids."""

    def __init__(self, rows: list[Row]) -> None:
        self._cycle = itertools.cycle(rows)
        self._n = itertools.count()

    def window(self, size: int) -> Iterator[Row]:
        total = 0
        while total < size:
            row = next(self._cycle)
            n = next(self._n)
            row = msgspec.structs.replace(row, id=f"{row.id}-{n}")
            total += len(msgspec.json.encode(row.parts)) + 200
            yield row


def _boundary_batch(n: int, previous: str, trigger_text: str) -> list[Row]:
    return rollover_batch(
        ids=(f"rollover-{n}", f"lead-in-{n}", f"continue-{n}"),
        rollover_id=f"r-{n}",
        reason="on-send",
        new_window_id=f"w:m:rollover-{n}",
        previous_window_id=previous,
        context_tokens=90_000,
        max_tokens=CONTEXT_WINDOW,
        trigger=make_row("user", trigger_text, id=f"user-{n}"),
        now_ms=1_700_000_000_000 + n,
    )


def _build_history(layout: Layout, source: _Rows, size: int) -> None:
    """About ``size`` bytes of history: windows of real rows, each sealed by a rollover."""
    store = HistoryStore(layout, durable=False)
    batch: list[Row] = []
    pending = 0
    for n in itertools.count():
        window = list(source.window(WINDOW_BYTES))
        batch.extend(window)
        batch.extend(_boundary_batch(n, f"w:{n}", "next task"))
        pending += WINDOW_BYTES
        if pending >= BUILD_BATCH_BYTES:
            store.append(batch)
            batch, pending = [], 0
        if _history_size(layout) + pending >= size:
            break
    if batch:
        store.append(batch)


def _history_size(layout: Layout) -> int:
    return sum(p.stat().st_size for p in (layout.archive, layout.chat) if p.exists())


def _session(root: Path, layout: Layout) -> Session:
    work = root / "work"
    work.mkdir(exist_ok=True)
    script = root / "script.json"
    script.write_text(
        json.dumps({"contextWindow": CONTEXT_WINDOW, "encoding": "o200k_base", "responses": []})
    )
    provider = ScriptedProvider.from_file(script)
    store = HistoryStore(layout)  # durable, as ``segue run`` uses it
    return Session(
        layout,
        store,
        provider,
        agent=resolve_agent("exec", work),
        tools=builtin_tools(layout, work, store=store),
        config=SessionConfig(experiment=True),
    )


def _assemble_and_count(session: Session) -> int:
    """The baseline: one request assembly of the current window, counted (real encoding)."""
    window = load_window(session.store)
    request = ProviderRequest(
        session.build_system(window), tuple(active_rows(window)), session.advertised_tools()
    )
    return session.count(request)


def _admit(session: Session, window: list[Row], n: int) -> None:
    """One rollover admission of ``window`` (the turn loop has it in hand), wired as the turn
    loop wires it: the carryover handoff, then ``admit_rollover``."""
    plan = RolloverPlan(
        reason="on-send",
        previous_window_id=current_window_id(window),
        context_tokens=90_000,
        trigger=make_row("user", "the next question", id=f"bench-user-{n}"),
        ids=(f"bench-rollover-{n}", f"bench-lead-in-{n}", f"bench-continue-{n}"),
        rollover_id=f"bench-r-{n}",
        now_ms=1_800_000_000_000 + n,
    )
    handoff = session.carryover.handoff(window, plan.ids[0])
    admit_rollover(
        plan,
        store=session.store,
        budget=session.budget,
        build_system=lambda: session.build_system(carried=handoff.snapshot()),
        tools=session.advertised_tools(),
        count=session.count,
        cleanup=lambda: session._cleanup_context(handoff),
        cancel=Cancellation(),
    )


@contextlib.contextmanager
def _counting_fsyncs() -> Iterator[list[int]]:
    """Count ``os.fsync`` calls (to explain the durable figure), restoring it after."""
    real = os.fsync
    calls = [0]

    def counted(fd: int) -> None:
        calls[0] += 1
        real(fd)

    os.fsync = counted  # type: ignore[assignment]  # a counting wrapper of the same call
    try:
        yield calls
    finally:
        os.fsync = real


def run() -> list[Result]:
    repeat = 15 if SCALE == "large" else 7
    source = _Rows(_source_rows())
    root = Path(tempfile.mkdtemp(prefix="segue-bench-rollover-"))
    names = {size: f"{size // MB} MB" for size in SIZES}
    try:
        sessions: dict[int, Session] = {}
        built: dict[int, float] = {}
        for size in SIZES:
            layout = Layout(root / f"h{size}", "bench")
            _build_history(layout, source, size)
            built[size] = _history_size(layout) / MB
            # Written unsynced for speed: flush it now, so no timed fsync pays for the build.
            os.sync()
            sessions[size] = _session(root / f"h{size}", layout)
        # The same admission with durable=False: the engine's own work, without the fsyncs.
        fast = _session(root / f"h{SIZES[-1]}", sessions[SIZES[-1]].layout)
        fast.store = HistoryStore(fast.layout, durable=False)
        fast.carryover = CarryoverFile(fast.layout, fast.store, durable=False)
        variants = [(size, sessions[size]) for size in SIZES] + [(0, fast)]
        best_admit = dict.fromkeys(range(len(variants)), float("inf"))
        best_assemble = dict.fromkeys(range(len(variants)), float("inf"))
        tokens = dict.fromkeys(range(len(variants)), 0)
        fsyncs = 0
        for n in range(repeat):
            for i, (_size, session) in enumerate(variants):
                # A fresh window to seal, the size a rollover finds (untimed). Appended with
                # the session's own durability, as the turn loop appended it.
                session.store.append(list(source.window(WINDOW_BYTES)))
                window = load_window(session.store)
                start = time.perf_counter()
                tokens[i] = _assemble_and_count(session)
                best_assemble[i] = min(best_assemble[i], time.perf_counter() - start)
                with _counting_fsyncs() as calls:
                    start = time.perf_counter()
                    _admit(session, window, n * len(variants) + i)
                    elapsed = time.perf_counter() - start
                best_admit[i] = min(best_admit[i], elapsed)
                if i == 0:
                    fsyncs = calls[0]
    finally:
        shutil.rmtree(root, ignore_errors=True)

    results = [
        Result(
            name=f"rollover admission @{names[size]} history",
            segue_seconds=best_admit[i],
            baseline=f"assemble+count the sealed window ({tokens[i]} tokens)",
            baseline_seconds=best_assemble[i],
            goal="< 1x",
            note=f"durable: {fsyncs} fsyncs; history built {built[size]:.1f} MB",
        )
        for i, (size, _s) in enumerate(variants[:-1])
    ]
    small, big = 0, len(SIZES) - 1
    results.append(
        Result(
            name=f"rollover admission {names[SIZES[big]]} vs {names[SIZES[small]]}",
            segue_seconds=best_admit[big],
            baseline=f"the same admission @{names[SIZES[small]]}",
            baseline_seconds=best_admit[small],
            goal="~1x (flat)",
        )
    )
    last = len(variants) - 1
    results.append(
        Result(
            name=f"rollover admission, no fsync @{names[SIZES[-1]]}",
            segue_seconds=best_admit[last],
            baseline=f"assemble+count the sealed window ({tokens[last]} tokens)",
            baseline_seconds=best_assemble[last],
            goal="< 1x",
            note="durable=False: the engine's own work",
        )
    )
    return results
