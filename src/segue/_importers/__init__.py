"""Bring your sessions (SPEC.md §9): ``segue history import --from claude-code|codex PATH``.

PATH is one transcript file or a directory of them (a Claude Code project directory, its
sub-agent files included; a Codex ``sessions`` tree). Files are opened as the store opens its
own (:mod:`segue._importers.files`); every file is read and checked before anything is
written; then the new rows go in as one batch, under the workspace lock, with fresh sequences
(R28). Re-importing appends only what the workspace does not have yet
(:mod:`segue._importers.rows`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from segue._history.protocol import TranscriptStore
from segue._importers import claude_code, codex
from segue._importers.entries import Entry, ImportRefused, NoConversation, SessionStart, ToolResult
from segue._importers.files import Skipped, lines, regular
from segue._importers.rows import build_rows, from_sub_agents, known_from
from segue._importers.sniff import described, sniff
from segue._importers.tasks import ImportedTask, StoreFor, import_chain, split, with_task_rows
from segue._messages import Row

Parser = Callable[[bytes | Iterable[bytes], str], list[Entry]]

PARSERS: dict[str, Parser] = {claude_code.FORMAT: claude_code.parse, codex.FORMAT: codex.parse}
FORMATS = tuple(PARSERS)


@dataclass(frozen=True)
class Imported:
    rows: list[Row]
    #: how many rows are a sub-agent's own (not counting window boundaries), tasks included
    from_sub_agents: int
    #: directory entries left out (not regular files)
    skipped: list[Skipped]
    #: the sub-agents imported as tasks: child workspaces (R41, :mod:`segue._importers.tasks`)
    tasks: list[ImportedTask] = field(default_factory=list)


@dataclass(frozen=True)
class TaskHome:
    """Where imported sub-agents become tasks: the importing workspace's home and id, and
    how a child's store is opened (of the parent's kind)."""

    home: Path
    parent_id: str
    store_for: StoreFor


def session_files(path: Path, fmt: str) -> tuple[list[Path], list[Skipped]]:
    """The transcript files PATH names: itself, or the sessions in a directory (Claude Code:
    the project directory's ``*.jsonl``, sub-agent files included, and ``*/subagents/*.jsonl``;
    Codex: every ``rollout-*.jsonl`` below it), with what was left out as not regular."""
    try:
        os.lstat(path)
    except FileNotFoundError:
        raise ImportRefused(f"{path}: no such file or directory") from None
    except OSError as exc:
        raise ImportRefused(f"cannot import {path}: {exc.strerror}") from None
    if os.path.isdir(path) and not os.path.islink(path):
        return _listing(path, fmt)
    why = regular(path)
    if why is not None:
        hint = " (name its target, or pass --follow-symlinks)" if os.path.islink(path) else ""
        raise ImportRefused(f"cannot import {path}: it is {why}{hint}")
    return [path], []


def _listing(path: Path, fmt: str) -> tuple[list[Path], list[Skipped]]:
    if fmt == claude_code.FORMAT:
        candidates = [*path.glob("*.jsonl"), *path.glob("*/subagents/*.jsonl")]
    else:
        candidates = list(path.rglob("rollout-*.jsonl"))
    found: list[Path] = []
    skipped: list[Skipped] = []
    for candidate in sorted(candidates):
        why = regular(candidate)
        if why is None:
            found.append(candidate)
        else:
            skipped.append(Skipped(candidate, why))
    if not found:
        left = f" ({len(skipped)} left out: not regular files)" if skipped else ""
        raise ImportRefused(f"{path}: no {fmt} session files in this directory{left}")
    return found, skipped


def parse_path(path: Path, fmt: str) -> tuple[list[Entry], list[Skipped]]:
    """Every file's entries, sessions oldest first (by their first timestamp, then name).
    NoConversation when no file holds a conversation of ``fmt`` (naming what was found)."""
    parser = PARSERS[fmt]
    files, skipped = session_files(path, fmt)
    parsed: list[tuple[int, str, list[Entry]]] = []
    empty: list[Path] = []
    for file in files:
        try:
            entries = parser(lines(file), str(file))
        except ImportRefused:
            found = _sniff(file)
            if found is not None and found != fmt:
                raise NoConversation(f"{file}: {described(found, fmt)}") from None
            raise
        if not any(not isinstance(e, SessionStart) for e in entries):
            empty.append(file)
            continue
        stamps = [e.ts for e in entries if not isinstance(e, ToolResult) and e.ts is not None]
        parsed.append((stamps[0] if stamps else 0, str(file), entries))
    if not parsed:
        first = empty[0]
        more = f" (and {len(empty) - 1} more file(s) like it)" if len(empty) > 1 else ""
        raise NoConversation(f"{first}: {described(_sniff(first), fmt)}{more}")
    parsed.sort(key=lambda p: (p[0], p[1]))
    return [e for _, _, entries in parsed for e in entries], skipped


def _sniff(file: Path) -> str | None:
    try:
        return sniff(lines(file))
    except ImportRefused:
        return None


def import_path(
    store: TranscriptStore, fmt: str, path: Path, *, tasks: TaskHome | None = None
) -> Imported:
    """Import PATH into ``store``'s workspace: the rows appended (none when all is known).

    With ``tasks``, each sub-agent becomes a child workspace (written first, each in one
    batch of its own) and the parent gets a ``task`` row naming it; without, a sub-agent is a
    window of the parent's transcript."""
    entries, skipped = parse_path(path, fmt)
    imported: list[ImportedTask] = []
    if tasks is not None:
        entries, chains = split(entries)
        for chain in chains:
            imported.append(import_chain(tasks.home, tasks.parent_id, fmt, chain,
                                         tasks.store_for))
        entries = with_task_rows(entries, fmt,
                                 [(c, t.task_id) for c, t in zip(chains, imported, strict=True)])
    with store.locked():
        known = known_from(store.rows(), fmt)
        rows = build_rows(fmt, entries, known, store.next_sequence())
        written = store.append(rows) if rows else []
    own = from_sub_agents(written) + sum(t.own for t in imported)
    return Imported(written, own, skipped, imported)


__all__ = ["FORMATS", "ImportRefused", "Imported", "NoConversation", "TaskHome", "import_path",
           "parse_path"]
