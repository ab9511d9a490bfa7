"""``history verify`` of the PostgreSQL store: the lines as stored, checked as the JSONL
store checks its files (offsets contiguous per source, rows decodable, sequences strictly
increasing and below the workspace's next sequence). Pure: it reads the lines it is given."""

from __future__ import annotations

from collections.abc import Iterable

from segue._history.reports import VerifyReport
from segue._history.scan import StoredLine


def verify_lines(lines: Iterable[StoredLine], next_sequence: int) -> VerifyReport:
    report = VerifyReport(receipt_state="stable")
    last: int | None = None
    expected = {"archive": 0, "chat": 0}
    for line in lines:
        report.lines += 1
        if line.offset != expected[line.source]:
            report.problems.append(
                f"{line.source} offset {line.offset}: expected {expected[line.source]}"
            )
        expected[line.source] = line.end
        if line.row is None:
            kind = "oversized line" if line.raw is None else "not a row"
            report.warnings.append(f"{line.source} offset {line.offset}: {kind}")
            continue
        report.rows += 1
        seq = line.row.sequence
        if seq is not None and last is not None and seq <= last:
            report.problems.append(f"historySequence {seq} after {last} (out of order)")
        if seq is not None:
            last = seq if last is None else max(last, seq)
    floor = next_sequence
    if last is not None and last >= floor:
        report.problems.append(
            f"historySequence {last} is not below the workspace's next sequence {floor}"
        )
    return report
