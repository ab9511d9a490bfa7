"""Read-only integrity report of a transcript (``segue history verify``).

Damage (``problems``, exit 1): an interrupted rewrite/rotation/truncation (a marker), a
partial batch or a pending receipt left by a crash, a broken or mismatched receipt, a torn
tail, sequences out of order. Warnings: unparseable or oversized complete lines (kept by
writers, skipped by readers), a transcript without a receipt (e.g. a copied Xum session).
Nothing is changed. :func:`verify_layout` takes no lock; ``HistoryStore.verify`` calls it
under the store's lock, so a change another process has in flight is not reported as damage.
"""

from __future__ import annotations

import os

from segue.fsutil import sha256_range
from segue.history.marker import MarkerUnreadable, read_marker
from segue.history.paths import paths
from segue.history.receipt import read_receipt, receipt_matches
from segue.history.recovery import torn_tail
from segue.history.reports import VerifyReport
from segue.history.scan import Source, scan_forward
from segue.workspace import Layout

_MAX_NOTES = 50


def _note(out: list[str], counts: dict[str, int], kind: str, text: str) -> None:
    counts[kind] = counts.get(kind, 0) + 1
    if counts[kind] <= _MAX_NOTES:
        out.append(text)


def verify_layout(layout: Layout) -> VerifyReport:
    report = VerifyReport()
    files_exist = paths(layout).chat.exists() or paths(layout).archive.exists()
    try:
        marker = read_marker(layout)
        if marker is not None:
            report.problems.append(f"interrupted {marker.op} (transaction marker present)")
    except MarkerUnreadable as exc:
        report.problems.append(f"unreadable transaction marker: {exc}")
    _check_receipt(layout, report, files_exist=files_exist)
    for source in ("archive", "chat"):
        torn = torn_tail(layout, source)
        if torn is not None:
            start, size, _ = torn
            report.problems.append(
                f"torn tail in {_name(source)}: {size - start} bytes at offset {start}"
            )
    counts: dict[str, int] = {}
    last_seq: int | None = None
    for source, path in (("archive", paths(layout).archive), ("chat", paths(layout).chat)):
        number = 0
        for line in scan_forward(path, source):  # type: ignore[arg-type]
            number += 1
            report.lines += 1
            where = f"{_name(source)} line {number} (offset {line.offset})"
            if line.raw is None:
                _note(report.warnings, counts, "big", f"{where}: longer than 1 MiB, skipped")
                continue
            if line.row is None:
                _note(report.warnings, counts, "bad", f"{where}: not a row, skipped")
                continue
            report.rows += 1
            seq = line.row.sequence
            if seq is None:
                continue
            if last_seq is not None and seq <= last_seq:
                _note(
                    report.problems, counts, "seq",
                    f"{where}: historySequence {seq} after {last_seq} (out of order)",
                )
            last_seq = seq if last_seq is None else max(last_seq, seq)
    for kind, n in counts.items():
        if n > _MAX_NOTES:
            target = report.problems if kind == "seq" else report.warnings
            target.append(f"... and {n - _MAX_NOTES} more like the above")
    return report


def _name(source: Source | str) -> str:
    return "chat-archive.jsonl" if source == "archive" else "chat.jsonl"


def _check_receipt(layout: Layout, report: VerifyReport, *, files_exist: bool) -> None:
    receipt = read_receipt(layout)
    if receipt is None:
        if os.path.lexists(paths(layout).receipt):
            report.receipt_state = "broken"
            report.problems.append(
                f"receipt {paths(layout).receipt.name} is not trusted "
                "(malformed, oversized, a symlink or not a regular file)"
            )
        elif files_exist:
            report.warnings.append("no append receipt (the transcript was not written by segue)")
        return
    report.receipt_state = receipt.state
    if receipt.state == "pending":
        j = receipt.append
        if j is not None:
            try:
                st = os.stat(paths(layout).chat)
                same = (st.st_dev, st.st_ino) == (j.dev, j.ino)
                size = st.st_size
            except FileNotFoundError:
                same, size = False, 0
            digest = sha256_range(paths(layout).chat, j.start, j.end) if same else None
            whole = same and size >= j.end and digest == j.sha256
            if same and not whole and size > j.start:
                report.problems.append(
                    f"partial batch at chat.jsonl offset {j.start}: "
                    f"{min(size, j.end) - j.start} of {j.end - j.start} bytes"
                )
        report.problems.append("receipt is pending: a change was interrupted")
        return
    if not receipt_matches(receipt, layout):
        report.receipt_state = "mismatched"
        report.problems.append("receipt does not match the files (changed outside the store)")
