"""What ``segue demo`` prints around the engine's own events: the header, each user message and
the closing summary. Pure: strings in, lines out (the CLI styles and writes them).

The summary states only what :class:`~segue._demo.run.DemoReport` verified: window ids and item
counts come from the transcript, and the recovered line is printed only when the check from
the ``read_item`` result passed; otherwise the summary says what failed.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from segue._context.budget import rollover_label
from segue._demo.run import DemoReport, DemoSetup

PROMPT_LINES = 4


def header(setup: DemoSetup, *, home_note: str) -> list[str]:
    plan = setup.plan
    calls = len(setup.tape.calls)
    return [
        f"segue demo · recorded agent run {setup.trajectory} "
        f"({calls} tool calls; SWE-agent trajectory, MIT licence)",
        "  The model is scripted: it makes the recorded run's steps, and tool results are the",
        "  recorded outputs, replayed (nothing is executed). The rest is segue's real engine:",
        "  transcript store, token budget, rollover and session_history.",
        f"  home: {setup.layout.home} ({home_note}) · workspace {setup.layout.workspace_id}",
        f"  context window {plan.context_window:,} tokens · threshold {plan.threshold}% "
        f"({rollover_label(plan.threshold).lower()}) · token-budget experiment on",
    ]


def prompt_lines(prompt: str, limit: int = PROMPT_LINES) -> list[str]:
    """A user message, its first ``limit`` lines shown."""
    lines = [line.rstrip() for line in prompt.strip().splitlines()] or [""]
    shown = [f"› user: {lines[0]}", *(f"        {line}" for line in lines[1:limit])]
    if len(lines) > limit:
        shown.append(f"        … ({len(lines) - limit} more lines)")
    return shown


def explore_commands(home: Path, workspace_id: str, item_id: str) -> list[str]:
    base = f"segue --home {shlex.quote(str(home))} -w {shlex.quote(workspace_id)} history"
    return [
        f"{base} windows",
        f"{base} items w:0",
        f"{base} read {shlex.quote(item_id)}",
        f"{base} export --format html -o demo.html",
        f"{base} verify",
    ]


def summary(report: DemoReport, *, kept: bool) -> list[str]:
    r = report.retrieval
    lines = [
        f"Windows: {len(report.windows)} · rollovers: {report.rollovers} "
        f"({report.replay_rollovers} during the replay, "
        f"{report.rollovers - report.replay_rollovers} during the look back)",
    ]
    for w in report.windows:
        span = f"items {w.first_item_id}–{w.last_item_id}" if w.first_item_id else "no items"
        lines.append(f"  {w.window_id:<8} {w.kind:<9} {w.items:>3} items ({span})")
    lines.append(f"Look back: session_history search {r.query!r}, then read_item {r.item_id}")
    if r.found:
        lines += [
            f"  recovered from {r.window_id} (checked in the read_item result; the line was not",
            "  in the model's context before it searched):",
            f"    {r.detail}",
        ]
    else:
        lines.append(f"  NOT recovered: {r.problem}")
    session_dir = report.home / "sessions" / report.workspace_id
    if kept:
        lines += [
            f"Transcript: {session_dir}/ (chat-archive.jsonl, chat.jsonl); "
            f"scripts and request logs in {report.home / 'demo'}/",
            "Explore it:",
            *(f"  {c}" for c in explore_commands(report.home, report.workspace_id, r.item_id)),
        ]
    else:
        lines.append(
            f"Transcript: {session_dir}/ was temporary and is removed now; run `segue demo --keep`"
            " to keep it and explore it with `segue --home DIR -w demo history windows`."
        )
    return lines
