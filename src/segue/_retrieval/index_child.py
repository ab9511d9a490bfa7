"""The background index builder's own process (started by :mod:`index_builder`):
``python -m segue._retrieval.index_child HOME WORKSPACE STEP_BYTES [WHOLE_BYTES]``. I/O.

A transcript of at most ``WHOLE_BYTES``, with no steps committed in the side file, is
rebuilt whole (:func:`~segue._retrieval.index_build.rebuild`: one transaction into the side
file, the vocabulary and the ``rows`` indexes once at the end, and the rebuild's worker
process on the other core where the load average leaves it idle, counting this process's
own part of it): about twice the steps' rate. ``kill -9`` then loses the whole build, which
the next builder starts again. Otherwise it runs
:func:`~segue._retrieval.index_steps.build_step` back to back, each step bounded by
``STEP_BYTES`` of transcript (not by the clock: a step with a deadline inserts a few lines
at a time to look at the clock, which doubles its cost), each its own transaction under the
side file's ``flock``, until a step puts the index in place. Being a process of its own, it
has its own interpreter lock and runs on another core: a thread in the look-back's process
got a tenth of a core while calls came back to back (each SQLite call of a step releases
the lock, and getting it back waited for the calling thread's switch interval).

On stdout, one line per committed step or inserted batch, ``step POS SIZE`` (transcript
bytes indexed so far, of the transcript's size when it began), and a last line ``end
OUTCOME`` ("built", or why it could not go on), or ``fail OUTCOME`` when it could not go on
for a reason that lasts until the transcript files change (a Xum stream in progress, a
receipt that does not vouch, a file that cannot be written, anything unexpected): its
parent starts no builder again until then. Another process stepping (the side file's lock)
is not such a reason.
Its stdin is a pipe only its parent holds. A whole rebuild looks at it after each batch and
ends there at its end of file (the parent stopped it, exited or was killed), leaving the
side file for the next builder to start afresh; by steps, a watcher thread waits for that
end, lets the step in progress commit for at most :data:`EXIT_SECONDS`, then exits (a step
cut short there is rolled back by the next one, as after ``kill -9``). So it never outlives
its parent by more than a batch or a second, or the last phase of a whole rebuild that had
inserted every batch.
"""

from __future__ import annotations

import contextlib
import os
import select
import sqlite3
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from segue._workspace import Layout

#: after the parent is gone, how long the step in progress may take to commit
EXIT_SECONDS = 1.0


def _report(line: str) -> None:
    """One line to the parent; a parent that is gone ends this process (nothing to keep)."""
    try:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
    except (BrokenPipeError, ValueError):
        os._exit(0)


def _steps_pos(path: Path) -> int | None:
    """How far the side file's steps have read (None: it cannot be read now)."""
    with contextlib.suppress(sqlite3.Error):
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=0)
        try:
            row = conn.execute("SELECT v FROM meta WHERE k = 'steps_pos'").fetchone()
        finally:
            conn.close()
        return None if row is None else int(row[0])
    return None


def _watch_parent(stopping: threading.Event, idle: threading.Event) -> None:
    """Wait for the end of stdin; then give the step in progress its time and exit."""
    with contextlib.suppress(OSError):
        while os.read(0, 4096):
            pass
    stopping.set()  # no step starts after this
    idle.wait(EXIT_SECONDS)
    os._exit(0)


#: the outcome of a child that found another process stepping (index_build's claim)
BUSY = "another process is building the index"


def _lasting(outcome: str) -> bool:
    """A failure that the next child would meet too while the files are as they are."""
    return outcome not in ("built", "stopped", BUSY) and "locked" not in outcome


class _Stopped(Exception):
    """The parent is gone (or stopped this process): the whole rebuild ends here."""


def _parent_gone() -> bool:
    """Whether stdin, the pipe only the parent holds, is at its end (without waiting)."""
    with contextlib.suppress(OSError, ValueError):
        while select.select([0], [], [], 0)[0]:
            if not os.read(0, 4096):
                return True
        return False
    return True


def _whole_wanted(layout: Layout, whole_bytes: int) -> bool:
    """A whole rebuild (a transcript of at most ``whole_bytes``, and no steps committed in
    the side file, which steps go on from instead)."""
    from segue._retrieval.index_file import build_path
    from segue._retrieval.snapshot import take

    if whole_bytes <= 0:
        return False
    snap = take(layout)
    return snap.archive_size + snap.chat_size <= whole_bytes and not _steps_pos(
        build_path(layout)
    )


def _whole(layout: Layout) -> str:
    """:func:`~segue._retrieval.index_build.rebuild`, with its worker on the other core where
    it pays (this process runs no other thread, so it may fork one), reporting after each
    batch, and ended there once the parent is gone."""
    from segue._retrieval import index_build_worker
    from segue._retrieval.index_build import rebuild

    index_build_worker.OWN_LOAD = 1.0  # this busy process is in the load average itself

    def progress(pos: int, total: int) -> None:
        if _parent_gone():
            raise _Stopped
        _report(f"step {pos} {total}")

    try:
        rebuild(layout, progress=progress)
    except _Stopped:
        return "stopped"
    return "built"


def build(home: str, workspace: str, step_bytes: int, whole_bytes: int = 0) -> str:
    """Rebuild whole (:func:`_whole_wanted`) or run the steps; the outcome ("built" or why
    not)."""
    from segue._fsutil import describe_os_error
    from segue._retrieval.index_build import NotBuilt
    from segue._workspace import Layout

    layout = Layout(Path(home), workspace)
    try:
        if _whole_wanted(layout, whole_bytes):
            return _whole(layout)
        return _steps(layout, step_bytes)
    except NotBuilt as exc:
        return str(exc)
    except OSError as exc:
        return describe_os_error(exc)
    except Exception as exc:  # noqa: BLE001 - a cache: the outcome, never a traceback
        return f"{type(exc).__name__}: {exc}"


def _steps(layout: Layout, step_bytes: int) -> str:
    """Steps back to back until one puts the index in place, a watcher thread ending this
    process once the parent is gone (and the step in progress had its time)."""
    from segue._retrieval.index_file import build_path
    from segue._retrieval.index_steps import build_step
    from segue._retrieval.snapshot import take

    stopping = threading.Event()
    idle = threading.Event()  # set while no step runs: the watcher may exit at once
    idle.set()
    threading.Thread(target=_watch_parent, args=(stopping, idle), daemon=True).start()
    try:
        while not stopping.is_set():
            snap = take(layout)
            idle.clear()
            done = build_step(layout, step_bytes)
            idle.set()
            if done is not None:
                return "built"
            pos = _steps_pos(build_path(layout))
            _report(f"step {-1 if pos is None else pos} {snap.archive_size + snap.chat_size}")
        return "stopped"
    finally:
        idle.set()


def main(argv: list[str]) -> int:
    home, workspace, step_bytes, *whole = argv
    outcome = build(home, workspace, int(step_bytes), int(whole[0]) if whole else 0)
    _report(f"{'fail' if _lasting(outcome) else 'end'} {' '.join(outcome.split())}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
