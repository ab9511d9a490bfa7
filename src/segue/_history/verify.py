"""Read-only integrity report of a transcript (``segue history verify``).

Damage (``problems``, exit 1): an interrupted rewrite/rotation/truncation (a marker), a
partial batch or a pending receipt left by a crash, a broken receipt or one the files no
longer match (other than by growth), a torn tail, sequences out of order. Warnings:
unparseable or oversized complete lines (kept by writers, skipped by readers), a transcript
without a receipt (e.g. a copied Xum session), a receipt Xum published, and an untracked
append (another writer such as Xum appended: cursors expire, nothing is damaged).
Nothing is changed. :func:`verify_layout` takes no lock; ``HistoryStore.verify`` calls it
under the store's lock, so a change another process has in flight is not reported as damage.
"""

from __future__ import annotations

import os

from segue._fsutil import sha256_range
from segue._history.marker import MarkerUnreadable, read_marker
from segue._history.paths import paths
from segue._history.receipt import FileStamp, current_stamps, read_receipt
from segue._history.recovery import torn_tail
from segue._history.reports import VerifyReport
from segue._history.scan import Source, scan_forward
from segue._workspace import Layout

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
                _note(
                    report.warnings, counts, "big",
                    f"{where}: longer than 1 MiB (session_history skips it, R24; the "
                    "history views and exports show it)",
                )
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
    chat, archive = current_stamps(layout)
    if (receipt.chat, receipt.archive) == (chat, archive):
        if not receipt.ours:
            report.warnings.append(
                "the receipt was last published by another writer (e.g. Xum): "
                "cursors start afresh, nothing is damaged"
            )
        return
    if _only_appended(receipt.chat, chat) and receipt.archive == archive:
        report.warnings.append(
            "chat.jsonl grew after the receipt (an untracked append, e.g. by Xum): "
            "cursors expire, nothing is damaged"
        )
        return
    report.receipt_state = "mismatched"
    report.problems.append("receipt does not match the files (changed outside the store)")


def _only_appended(then: FileStamp | None, now: FileStamp | None) -> bool:
    """The same file, not smaller: what an append by another writer leaves."""
    if now is None:
        return False
    if then is None:
        return True
    return (then.dev, then.ino) == (now.dev, now.ino) and now.size >= then.size
