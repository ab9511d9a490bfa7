"""Forward scan of 2 MiB of realistic rows parsed to typed values (issue 2).

The rows are the packaged SWE-agent trajectories converted to segue rows (tool calls and their
outputs included), repeated with fresh ids and sequences until the file holds 2 MiB — the same
size as one ``session_history`` scan window (R24).

Two references, each measured side by side with ``scan_forward`` in this process:

* the floor: read the file and ``bytes.count(b"\\n")`` — what any line-oriented pass costs;
* ``msgspec.json.decode`` of every line — JSON parsing alone, without building typed rows,
  offsets, or the reset-marker check.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import msgspec

from bench.common import SCALE, Result, side_by_side
from segue._demo.trajectory import iter_packaged_rows
from segue._history.scan import scan_forward
from segue._messages import encode_row, with_metadata

SIZE = 2 << 20  # 2 MiB
_MB = 1_000_000


def realistic_jsonl(size: int) -> bytes:
    """At least ``size`` bytes of complete rows, as the store writes them."""
    out: list[bytes] = []
    total = 0
    seq = 0
    rounds = 0
    while total < size:
        for row in iter_packaged_rows(actions_as_tools=True):
            stored = with_metadata(row, historySequence=seq)
            line = encode_row(
                msgspec.structs.replace(stored, id=f"{row.id}-r{rounds}", workspaceId="bench")
            )
            out.append(line + b"\n")
            total += len(line) + 1
            seq += 1
            if total >= size:
                break
        rounds += 1
    return b"".join(out)


def run() -> list[Result]:
    repeat = 9 if SCALE == "large" else 5
    with tempfile.TemporaryDirectory(prefix="segue-bench-scan-") as tmp:
        path = Path(tmp) / "chat.jsonl"
        data = realistic_jsonl(SIZE)
        path.write_bytes(data)
        expected = data.count(b"\n")

        def segue_scan() -> None:
            rows = sum(1 for line in scan_forward(path, "chat") if line.row is not None)
            if rows != expected:
                raise AssertionError(f"scan_forward parsed {rows} of {expected} rows")

        def raw_count() -> None:
            if path.read_bytes().count(b"\n") != expected:
                raise AssertionError("line count changed")

        def msgspec_lines() -> None:
            decode = msgspec.json.decode
            n = sum(1 for line in path.read_bytes().splitlines() if decode(line))
            if n != expected:
                raise AssertionError("msgspec decoded a different number of lines")

        scan_s, raw_s = side_by_side(segue_scan, raw_count, repeat)
        scan2_s, json_s = side_by_side(segue_scan, msgspec_lines, repeat)

    mb = len(data) / _MB
    rate = f"{mb / min(scan_s, scan2_s):.1f} MB/s typed rows, {expected} rows, {mb:.2f} MB"
    return [
        Result(
            name="scan_forward 2 MiB → typed rows",
            segue_seconds=scan_s,
            baseline="read + bytes.count(b'\\n') (floor)",
            baseline_seconds=raw_s,
            goal="report MB/s; ratio to the floor for tracking",
            note=rate,
        ),
        Result(
            name="scan_forward 2 MiB vs JSON decode only",
            segue_seconds=scan2_s,
            baseline="read + msgspec.json.decode per line",
            baseline_seconds=json_s,
            goal="≤ 5× (typed rows cost little over parsing)",
            note=f"{mb / json_s:.1f} MB/s msgspec",
        ),
    ]


if __name__ == "__main__":
    for result in run():
        print(f"{result.name}: {result.ratio:.2f}x {result.baseline} ({result.note})")
