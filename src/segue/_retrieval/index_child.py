"""The background index builder's own process (started by :mod:`index_builder`):
``python -m segue._retrieval.index_child HOME WORKSPACE STEP_BYTES``. I/O.

It runs :func:`~segue._retrieval.index_steps.build_step` back to back, each step bounded by
``STEP_BYTES`` of transcript (not by the clock: a step with a deadline inserts a few lines
at a time to look at the clock, which doubles its cost), each its own transaction under the
side file's ``flock``, until a step puts the index in place. Being a process of its own, it
has its own interpreter lock and runs on another core: a thread in the look-back's process
got a tenth of a core while calls came back to back (each SQLite call of a step releases
the lock, and getting it back waited for the calling thread's switch interval).

On stdout, one line per committed step, ``step POS SIZE`` (transcript bytes indexed so far,
of the transcript's size when the step began), and a last line ``end OUTCOME`` ("built", or
why it could not go on), or ``fail OUTCOME`` when it could not go on for a reason that lasts
until the transcript files change (a Xum stream in progress, a receipt that does not vouch,
a file that cannot be written, anything unexpected): its parent starts no builder again
until then. Another process stepping (the side file's lock) is not such a reason.
Its stdin is a pipe only its parent holds: at end of file (the
parent stopped it, exited or was killed) it lets the step in progress commit for at most
:data:`EXIT_SECONDS`, then exits; a step cut short there is rolled back by the next one, as
after ``kill -9``. So it never outlives its parent by more than that.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import sys
import threading
from pathlib import Path

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


def build(home: str, workspace: str, step_bytes: int) -> str:
    """Run the steps; the outcome ("built" or why not)."""
    from segue._fsutil import describe_os_error
    from segue._retrieval.index_build import NotBuilt
    from segue._retrieval.index_file import build_path
    from segue._retrieval.index_steps import build_step
    from segue._retrieval.snapshot import take
    from segue._workspace import Layout

    layout = Layout(Path(home), workspace)
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
    except NotBuilt as exc:
        return str(exc)
    except OSError as exc:
        return describe_os_error(exc)
    except Exception as exc:  # noqa: BLE001 - a cache: the outcome, never a traceback
        return f"{type(exc).__name__}: {exc}"
    finally:
        idle.set()


def main(argv: list[str]) -> int:
    home, workspace, step_bytes = argv
    outcome = build(home, workspace, int(step_bytes))
    _report(f"{'fail' if _lasting(outcome) else 'end'} {' '.join(outcome.split())}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
