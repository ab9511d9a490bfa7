"""Moving a workspace between stores, byte for byte (``segue history migrate``, SPEC.md §8).

A copy moves *lines*, not rows: every line's exact bytes (unparseable ones, invalid UTF-8,
lines over 1 MiB), which of the two files it is in (archive or chat) and the sequence floor,
so a round trip JSONL → PostgreSQL → JSONL gives back identical files and every answer stays
the same. Rules:

* The source is read in one consistent state: the JSONL files under their lock after
  recovery (a torn tail is not data), a PostgreSQL snapshot.
* A source with damage recovery could not deal with is refused (``history verify`` says why).
* The target workspace must be empty; the copy is one transaction (PostgreSQL) or files
  renamed into place and then a stable receipt (JSONL), so a failed copy leaves nothing a
  reader would take for history.
* After the copy the target is read back and compared with the source: line count and a
  SHA-256 over each file's bytes. A mismatch is an error naming both digests.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from segue._errors import StoreError
from segue._fsutil import fsync_dir
from segue._history.paths import paths
from segue._history.receipt import Receipt, current_stamps, new_epoch, write_receipt
from segue._history.scan import Source
from segue._history.store import HistoryStore
from segue._workspace import Layout

_CHUNK = 1 << 20
TEMP_SUFFIX = ".migrate.tmp"


@dataclass
class Digest:
    """What a copy must preserve: per file, the line count and a hash of its bytes."""

    lines: dict[str, int] = field(default_factory=lambda: {"archive": 0, "chat": 0})
    hashes: dict[str, hashlib._Hash] = field(
        default_factory=lambda: {"archive": hashlib.sha256(), "chat": hashlib.sha256()}
    )

    def add(self, source: Source, raw: bytes) -> None:
        self.lines[source] += 1
        self.hashes[source].update(raw + b"\n")

    def summary(self) -> dict[str, tuple[int, str]]:
        return {s: (self.lines[s], self.hashes[s].hexdigest()) for s in ("archive", "chat")}


@dataclass(frozen=True)
class MigrateReport:
    workspace_id: str
    lines: int
    archive_lines: int
    next_sequence: int
    sha256: dict[str, str]


def _file_lines(path: Path) -> Iterator[bytes]:
    if not path.exists():
        return
    with open(path, "rb", buffering=0) as f:
        rest = b""
        while True:
            buf = f.read(_CHUNK)
            if not buf:
                break
            parts = (rest + buf).split(b"\n")
            rest = parts.pop()
            yield from parts
    if rest:
        raise StoreError(f"{path} ends with a torn line; run `segue history verify`")


def jsonl_lines(layout: Layout) -> Iterator[tuple[Source, bytes]]:
    p = paths(layout)
    for raw in _file_lines(p.archive):
        yield "archive", raw
    for raw in _file_lines(p.chat):
        yield "chat", raw


def _digest(lines: Iterator[tuple[Source, bytes]]) -> Digest:
    d = Digest()
    for source, raw in lines:
        d.add(source, raw)
    return d


def _tee(lines: Iterator[tuple[Source, bytes]], d: Digest) -> Iterator[tuple[Source, bytes]]:
    for source, raw in lines:
        d.add(source, raw)
        yield source, raw


def _check_source(problems: list[str], where: str) -> None:
    if problems:
        raise StoreError(
            f"{where} has damage that recovery did not resolve ({problems[0]}); "
            "see `segue history verify`",
            code="source_damaged",
        )


def _compare(source: Digest, target: Digest, where: str) -> None:
    if source.summary() != target.summary():
        raise StoreError(
            f"the copy in {where} does not match its source: {target.summary()} != "
            f"{source.summary()}",
            code="migrate_mismatch",
        )


def _report(workspace: str, d: Digest, next_sequence: int) -> MigrateReport:
    s = d.summary()
    return MigrateReport(
        workspace,
        s["archive"][0] + s["chat"][0],
        s["archive"][0],
        next_sequence,
        {k: v[1] for k, v in s.items()},
    )


def jsonl_to_postgres(layout: Layout, url: str) -> MigrateReport:
    from segue.postgres._schema import redact
    from segue.postgres._store import PostgresStore

    source = HistoryStore(layout)
    with PostgresStore(url, layout.workspace_id) as target, source.locked():
        source.recover()
        _check_source(source.verify().problems, f"workspace {layout.workspace_id}")
        floor = source.next_sequence()
        sent = Digest()
        target.load_lines(_tee(jsonl_lines(layout), sent), floor)
        got = Digest()
        for where, _off, _seq, raw in target.raw_lines():
            got.add(where, raw)
        next_sequence = target.next_sequence()
        _compare(sent, got, redact(url))
    return _report(layout.workspace_id, got, next_sequence)


def postgres_to_jsonl(url: str, layout: Layout) -> MigrateReport:
    from segue.postgres._bulk import LineCheck, raw_lines
    from segue.postgres._store import PostgresStore

    target = HistoryStore(layout)
    p = paths(layout)
    where = f"workspace {layout.workspace_id} in PostgreSQL"
    with PostgresStore(url, layout.workspace_id) as source, target.locked():
        if p.chat.exists() or p.archive.exists():
            raise StoreError(
                f"workspace {layout.workspace_id} already has a transcript in {p.session_dir}; "
                "migrate into an empty workspace",
                code="target_not_empty",
            )
        p.session_dir.mkdir(parents=True, exist_ok=True)
        sent = Digest()
        check = LineCheck()
        # one snapshot, one streaming read: the lines are checked as `history verify` would
        # and written to temporary files, which become the transcript only when all is well
        with source.snapshot() as snap:
            next_sequence = snap.state.next_sequence

            def lines() -> Iterator[tuple[Source, bytes]]:
                for src, off, seq, raw in raw_lines(snap.conn, source.workspace_id,
                                                    snap.state.chat_pos):
                    check.add(src, off, seq, raw)
                    sent.add(src, raw)
                    yield src, raw

            _write_files(p.archive, p.chat, lines(), sent,
                         lambda: _check_source(check.finish(next_sequence), where))
        chat, archive = current_stamps(layout)
        write_receipt(layout, Receipt("stable", new_epoch(), chat, archive, next_sequence))
    got = _digest(jsonl_lines(layout))
    _compare(sent, got, str(p.session_dir))
    return _report(layout.workspace_id, got, next_sequence)


def _write_files(
    archive: Path,
    chat: Path,
    lines: Iterator[tuple[Source, bytes]],
    d: Digest,
    accept: Callable[[], None],
) -> None:
    """Write ``lines`` to temporary files, call ``accept`` (which raises to refuse them),
    then rename the files into place."""
    temps = {
        "archive": archive.with_name(archive.name + TEMP_SUFFIX),
        "chat": chat.with_name(chat.name + TEMP_SUFFIX),
    }
    handles = {s: open(t, "wb") for s, t in temps.items()}  # noqa: SIM115 (closed below)
    try:
        for source, raw in lines:
            handles[source].write(raw + b"\n")
        accept()
        for f in handles.values():
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        for s, f in handles.items():
            f.close()
            temps[s].unlink(missing_ok=True)
        raise
    for f in handles.values():
        f.close()
    for source, final in (("archive", archive), ("chat", chat)):
        if d.lines[source]:
            os.replace(temps[source], final)
        else:
            temps[source].unlink()
    fsync_dir(chat.parent)
