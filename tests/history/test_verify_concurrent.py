"""``segue history verify`` beside a live writer: an append in flight is not damage.

While another process is inside an append (pending receipt published, batch being written)
the files look exactly like an interrupted append. Verify must not call that damage (exit 1):
it waits for the lock, like every other reader (R30), and reports on a settled transcript.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from segue import HistoryStore, Layout, make_row
from segue._errors import LockTimeout

# Appends one batch and stops after writing it, before the stable receipt, until told to go on.
_PAUSED_WRITER = """
import sys
from pathlib import Path
from segue import _fsutil as fsutil
from segue._history import HistoryStore
from segue._history import store as store_module
from segue._messages import make_row
from segue._workspace import Layout

def write_all(fd, data):
    fsutil.write_all(fd, data)
    print("mid-append", flush=True)
    sys.stdin.readline()

store_module.write_all = write_all
HistoryStore(Layout(Path(sys.argv[1]), "ws"), durable=False).append(
    [make_row("user", "in flight", id="f0"), make_row("assistant", "too", id="f1")]
)
"""


def test_verify_does_not_report_an_append_in_flight(tmp_path: Path) -> None:
    store = HistoryStore(Layout(tmp_path, "ws"), durable=False, lock_timeout=0.3)
    store.append([make_row("user", "settled", id="s0")])
    writer = subprocess.Popen(
        [sys.executable, "-c", _PAUSED_WRITER, str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        assert writer.stdout is not None and writer.stdin is not None
        assert writer.stdout.readline() == b"mid-append\n"
        with pytest.raises(LockTimeout):  # rather than a report of damage
            store.verify()
        writer.stdin.write(b"\n")
        writer.stdin.close()
        assert writer.wait() == 0
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.wait()
        for stream in (writer.stdin, writer.stdout):
            if stream is not None and not stream.closed:
                stream.close()
    report = store.verify()
    assert report.ok, report.problems
    assert [r.id for r in store.rows()] == ["s0", "f0", "f1"]
