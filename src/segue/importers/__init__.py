"""Bring your sessions (SPEC.md §9): ``segue history import --from claude-code|codex PATH``.

PATH is one transcript file or a directory of them (a Claude Code project directory, a Codex
``sessions`` tree). Every file is read and checked before anything is written; then the new
rows go in as one batch, under the workspace lock, with fresh sequences (R28). Re-importing
appends only what the workspace does not have yet: rows are known by the ids derived from
their source (see :mod:`segue.importers.entries`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from segue.history.protocol import TranscriptStore
from segue.importers import claude_code, codex
from segue.importers.entries import Entry, ImportRefused, Known, ToolResult, build_rows
from segue.messages import Row

Parser = Callable[[bytes, str], list[Entry]]

PARSERS: dict[str, Parser] = {claude_code.FORMAT: claude_code.parse, codex.FORMAT: codex.parse}
FORMATS = tuple(PARSERS)


def session_files(path: Path, fmt: str) -> list[Path]:
    """The transcript files PATH names: itself, or the sessions in a directory (Claude Code:
    the project directory's ``*.jsonl``, sub-agent files left out; Codex: every
    ``rollout-*.jsonl`` below it)."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise ImportRefused(f"{path}: no such file or directory")
    if fmt == claude_code.FORMAT:
        found = [p for p in path.glob("*.jsonl") if not p.name.startswith("agent-")]
    else:
        found = list(path.rglob("rollout-*.jsonl"))
    if not found:
        raise ImportRefused(f"{path}: no {fmt} session files in this directory")
    return sorted(found)


def parse_path(path: Path, fmt: str) -> list[Entry]:
    """Every file's entries, sessions oldest first (by their first timestamp, then name)."""
    parser = PARSERS[fmt]
    parsed: list[tuple[int, str, list[Entry]]] = []
    for file in session_files(path, fmt):
        entries = parser(file.read_bytes(), str(file))
        stamps = [e.ts for e in entries if not isinstance(e, ToolResult) and e.ts is not None]
        parsed.append((stamps[0] if stamps else 0, str(file), entries))
    parsed.sort(key=lambda p: (p[0], p[1]))
    return [e for _, _, entries in parsed for e in entries]


def known_rows(store: TranscriptStore, fmt: str) -> Known:
    known = Known()
    for row in store.rows():
        known.any_rows = True
        known.ids.add(row.id)
        source = row.metadata.get("importSource")
        if isinstance(source, dict) and source.get("format") == fmt:
            session = source.get("session")
            if isinstance(session, str):
                known.sessions.add(session)
    return known


def import_path(store: TranscriptStore, fmt: str, path: Path) -> list[Row]:
    """Import PATH into ``store``'s workspace; the rows appended (none when all is known)."""
    entries = parse_path(path, fmt)
    with store.locked():
        rows = build_rows(fmt, entries, known_rows(store, fmt))
        return store.append(rows) if rows else []


__all__ = ["FORMATS", "ImportRefused", "import_path", "parse_path"]
