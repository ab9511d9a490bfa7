"""The reader-visibility rule against a writer in another process (R28, R30).

``HistoryStore.lines()`` fixes its byte ranges under the lock and then reads without it. A
torn tail a foreign writer left is inside that range but is not data; if a writer then
recovers (removing the tail) and appends a batch, the batch's first bytes land in the range
the reader already fixed. The reader must still see the whole batch or none of it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from segue import HistoryStore, Layout, make_row

_WRITER = (
    "import sys; from pathlib import Path; from segue._history import HistoryStore;"
    "from segue._messages import make_row; from segue._workspace import Layout;"
    "HistoryStore(Layout(Path(sys.argv[1]), 'ws'), durable=False).append("
    "[make_row('user', 'n' * 200, id=f'new{i}') for i in range(3)])"
)


def test_batch_written_over_a_removed_torn_tail_is_not_half_visible(tmp_path: Path) -> None:
    store = HistoryStore(Layout(tmp_path, "ws"), durable=False)
    # larger than the scanner's read-ahead, so the reader really reads the end later
    store.append([make_row("user", f"old {i} " + "o" * 40_000, id=f"old{i}") for i in range(5)])
    with open(store.layout.chat, "ab") as f:
        f.write(b'{"id":"foreign","role":"user","parts":[{"type":"text","text":"' + b"t" * 450)
    reader = store.lines()
    first = next(reader)  # the snapshot is taken
    assert first.row is not None and first.row.id == "old0"
    subprocess.run([sys.executable, "-c", _WRITER, str(tmp_path)], check=True)
    seen = [line.row.id for line in reader if line.row is not None]
    new = [rid for rid in seen if rid.startswith("new")]
    assert new in ([], ["new0", "new1", "new2"]), seen
    assert seen[:4] == ["old1", "old2", "old3", "old4"]
    assert [r.id for r in store.rows()][-3:] == ["new0", "new1", "new2"]
