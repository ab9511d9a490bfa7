"""Imported sub-agents become tasks (SPEC.md §9, R41): child workspaces readable with
``task_id``.

A Claude Code sidechain (in the session file, or an ``agent-*.jsonl`` file) and a Codex
sub-agent session are another agent's ``task``: so each becomes what a segue task is, a child
workspace of the importing one (:mod:`segue._children`, its link naming the source), holding
the sub-agent's own rows (windows, tool calls and results, its own clears as its own floor).
The parent keeps its own conversation and gets, in the window of the session that ran the
sub-agent, one settled ``task`` call that names the child (``{"taskId", "agent", "report",
"imported"}``), as a segue task would have left it: the look-back finds the task there, and
``task_id`` reaches the child only while that row is above the parent's floor.

A re-import finds each child by its source and appends only what is new to it, as the import
of a session does (:mod:`segue._importers.rows`); the ``task`` row is written once.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from segue._children import create_child, imported_child
from segue._history.protocol import TranscriptStore
from segue._importers.entries import Entry, Message, SessionStart, ToolCall, ToolResult
from segue._importers.rows import build_rows, from_sub_agents, known_from
from segue._messages import Row
from segue._workspace import Layout

#: How much of a sub-agent's last reply the parent's ``task`` result quotes.
_REPORT_CHARS = 2000
_PROMPT_CHARS = 500

#: The store of a child workspace, of the parent's kind.
StoreFor = Callable[[Layout], TranscriptStore]


@dataclass
class Chain:
    """One sub-agent's entries, in order, after its :class:`SessionStart`."""

    start: SessionStart
    entries: list[Entry] = field(default_factory=list)

    @property
    def source(self) -> dict[str, str]:
        assert self.start.agent is not None  # only sub-agents are chains
        return {"session": self.start.session, "agent": self.start.agent}

    def first(self, role: str) -> str:
        return next((e.text for e in self.entries if isinstance(e, Message) and e.role == role
                     and e.text.strip()), "")

    def last_reply(self) -> str:
        return next((e.text for e in reversed(self.entries)
                     if isinstance(e, Message) and e.role == "assistant" and e.text.strip()), "")


@dataclass(frozen=True)
class ImportedTask:
    task_id: str
    rows: list[Row]
    #: the rows that hold the sub-agent's own words or calls
    own: int


def split(entries: Sequence[Entry]) -> tuple[list[Entry], list[Chain]]:
    """The main conversation's entries (with their session starts) and each sub-agent's
    chain, one per (session, agent), in the order they first appear."""
    main: list[Entry] = []
    chains: dict[tuple[str, str], Chain] = {}
    current: Chain | None = None
    for entry in entries:
        if isinstance(entry, SessionStart):
            if entry.agent is None:
                current = None
                main.append(entry)
            else:
                key = (entry.session, entry.agent)
                current = chains.setdefault(key, Chain(entry))
            continue
        if current is not None:
            current.entries.append(entry)
        else:
            main.append(entry)
    return main, list(chains.values())


def import_chain(
    home: Path, parent_id: str, fmt: str, chain: Chain, store_for: StoreFor
) -> ImportedTask:
    """Append what is new of ``chain`` to its child workspace (found by its source, or
    created), as one batch under the child's lock."""
    source = {"format": fmt, **chain.source}
    layout = imported_child(home, parent_id, source)
    if layout is None:
        layout = create_child(home, parent_id, agent=chain.source["agent"],
                              prompt=chain.first("user"), now_ms=chain.start.ts,
                              status="imported", source=source)
    store = store_for(layout)
    try:
        with store.locked():
            known = known_from(store.rows(), fmt)
            rows = build_rows(fmt, [chain.start, *chain.entries], known, store.next_sequence())
            written = store.append(rows) if rows else []
    finally:
        close = getattr(store, "close", None)
        if callable(close):
            close()
    return ImportedTask(layout.workspace_id, written, from_sub_agents(written))


def with_task_rows(main: list[Entry], fmt: str, done: Sequence[tuple[Chain, str]]) -> list[Entry]:
    """``main`` with one settled ``task`` call per imported sub-agent, at the end of the
    entries of the session that ran it (its own window), or in a window of that session of
    its own when the import holds none of that session's conversation."""
    out = list(main)
    for chain, task_id in done:
        call_id = f"segue-task:{task_id}"
        report = chain.last_reply()
        result = {"ok": True, "taskId": task_id, "agent": chain.source["agent"],
                  "report": report[:_REPORT_CHARS], "imported": fmt}
        marker: list[Entry] = [
            ToolCall(source_id=f"{chain.start.session}:{chain.source['agent']}:task",
                     call_id=call_id, name="task",
                     input={"agent": chain.source["agent"],
                            "prompt": chain.first("user")[:_PROMPT_CHARS]},
                     ts=chain.start.ts),
            ToolResult(call_id, json.dumps(result, ensure_ascii=False, separators=(",", ":")),
                       False),
        ]
        at = _end_of_session(out, chain.start.session)
        if at is None:
            start = SessionStart(chain.start.session, chain.start.ts, None, chain.start.source)
            out.extend([start, *marker])
        else:
            out[at:at] = marker
    return out


def _end_of_session(entries: Sequence[Entry], session: str) -> int | None:
    """Where the last run of ``session``'s main entries ends, or None when it has none."""
    end: int | None = None
    inside = False
    for index, entry in enumerate(entries):
        if isinstance(entry, SessionStart):
            inside = entry.session == session and entry.agent is None
            if inside:
                end = index + 1
        elif inside:
            end = index + 1
    return end
