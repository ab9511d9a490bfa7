"""R24's bounds pinned to SPEC.md §6's numbers (2 MiB and 500 rows scanned per call, 16 KiB per
result), measured on the default tool rather than read back from its own constants."""

from __future__ import annotations

from pathlib import Path

from segue._retrieval import SessionHistoryTool
from segue._retrieval.envelope import serialize
from segue._workspace import Layout
from tests.retrieval.helpers import encoded, text_row, write_history

MIB = 1 << 20


def test_a_call_scans_exactly_500_rows(tmp_path: Path) -> None:
    layout = Layout(tmp_path, "rows")
    write_history(layout, [], encoded([text_row(f"row {i}", i) for i in range(1200)]))
    # the bounded scan itself (with an index, the cursor call would go on from the index,
    # built by the first call's rebuild step)
    tool = SessionHistoryTool(layout, use_index=False)
    first = tool.call({"action": "search", "query": "nothing matches this"})
    assert first["ok"] and first["scanned"]["rows"] == 500
    assert first["nextCursor"] is not None
    second = tool.call(
        {"action": "search", "query": "nothing matches this", "cursor": first["nextCursor"]}
    )
    assert second["scanned"]["rows"] == 500


def test_a_call_scans_at_most_2_mib(tmp_path: Path) -> None:
    layout = Layout(tmp_path, "bytes")
    rows = encoded([text_row("x" * (100 * 1024) + f" big {i}", i) for i in range(60)])
    write_history(layout, [], rows)
    tool = SessionHistoryTool(layout)
    answer = tool.call({"action": "search", "query": "nothing matches this"})
    scanned = answer["scanned"]["bytes"]
    assert scanned <= 2 * MIB
    assert scanned > 2 * MIB - (len(rows[0]) + 1)  # it stops only for the bound
    assert answer["scanned"]["rows"] < 500
    assert len(serialize(answer)) <= 16 * 1024
