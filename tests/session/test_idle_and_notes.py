"""Idle compaction (R4), the once-per-window notes warning (R14) and notes in the next
window (R15), end to end."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from segue import Compacted, Warned, make_row
from tests.front import is_synthetic_continuation
from tests.session.helpers import echo, harness

WINDOW = 8000


def test_idle_compaction_summarizes_before_the_send(tmp_path: Path) -> None:
    h = harness(
        tmp_path,
        [{"text": "Summary: built the parser."}, {"text": "welcome back"}],
        context_window=WINDOW,
    )
    h.store.append([make_row("user", "build the parser", id="u0", metadata={"timestamp": 0})])
    session = h.session()
    session.config = dataclasses.replace(session.config, idle_compaction_minutes=30)
    session.clock = lambda: 31 * 60_000
    result = session.send("I am back")
    assert result.status == "completed"
    assert [e.reason for e in h.events if isinstance(e, Compacted)] == ["idle"]
    answer = h.requests()[-1]
    assert answer.rows[0].flag("compactionBoundary")
    assert [r.text for r in answer.rows][-1] == "I am back"
    assert "build the parser" not in [r.text for r in answer.rows]


def test_no_idle_compaction_before_the_idle_period(tmp_path: Path) -> None:
    h = harness(tmp_path, [{"text": "sure"}], context_window=WINDOW)
    h.store.append([make_row("user", "earlier", id="u0", metadata={"timestamp": 0})])
    session = h.session()
    session.config = dataclasses.replace(session.config, idle_compaction_minutes=30)
    session.clock = lambda: 29 * 60_000
    session.send("still here")
    assert not any(isinstance(e, Compacted) for e in h.events)
    assert len(h.requests()) == 1


def test_warning_once_per_window_and_notes_reach_the_next_window(tmp_path: Path) -> None:
    notes_path = "/memories/workspace/context-notes.md"
    h = harness(
        tmp_path,
        [
            {"toolCalls": [echo("alpha", 1400)]},
            {"toolCalls": [echo("beta", 1100)]},  # crosses the warning point (3200)
            {
                "toolCalls": [
                    {
                        "name": "memory",
                        "input": {
                            "command": "write",
                            "path": notes_path,
                            "content": "NOTE: parser done",
                        },
                    }
                ]
            },
            {"toolCalls": [echo("gamma", 300)]},  # no repeat; rolls over (gamma is carried)
            {"toolCalls": [echo("delta", 1000)]},  # the new window stays below its warning
            {"text": "continuing"},
        ],
        context_window=WINDOW,
    )
    result = h.session(threshold=50).send("work")
    assert result.status == "completed"
    assert result.rollovers == 1
    assert len([e for e in h.events if isinstance(e, Warned)]) == 1
    warning_rows = [r for r in h.rows() if r.mux_type == "context-budget-warning"]
    assert len(warning_rows) == 1
    assert notes_path in warning_rows[0].text
    new_window = h.requests()[-1]
    assert "NOTE: parser done" in new_window.system
    assert "context-notes.md" in new_window.system


def test_mid_turn_compaction_goes_on_with_a_user_side_continuation(tmp_path: Path) -> None:
    """Experiment off: the threshold at a settled step compacts, and the next request ends
    with a user row, never on the summary (an assistant row a provider would take as a
    prefill)."""
    h = harness(
        tmp_path,
        [
            {"toolCalls": [echo("alpha", 1400)]},
            {"toolCalls": [echo("beta", 1400)]},
            {"toolCalls": [echo("gamma", 1400)]},  # crosses 4400 → automatic compaction
            {"text": "Summary: echoed alpha, beta and gamma."},
            {"text": "all three done"},
        ],
        context_window=WINDOW,
    )
    result = h.session(experiment=False, threshold=50).send("run three echoes")
    assert result.status == "completed", result.reason
    assert [e.reason for e in h.events if isinstance(e, Compacted)] == ["automatic"]
    after = h.requests()[-1]
    assert after.rows[0].flag("compactionBoundary")
    assert after.rows[-1].role == "user"
    assert is_synthetic_continuation(after.rows[-1])
    assert "gamma gamma" not in json.dumps([r.text for r in after.rows])


def test_an_agent_without_the_memory_tool_gets_no_memory(tmp_path: Path) -> None:
    """R15: the experiment never turns memory on; memory is on for agents that may use it."""
    h = harness(tmp_path, [{"text": "a"}, {"text": "b"}], context_window=WINDOW)
    h.layout.notes.parent.mkdir(parents=True)
    h.layout.notes.write_text("NOTE: secret plan")
    h.agent_file("nomem", "---\nbase: exec\ntools:\n  remove: [memory]\n---\n")
    h.session(agent="nomem").send("hi")
    assert "secret plan" not in h.requests()[-1].system
    h.session().send("hi again")
    assert "secret plan" in h.requests()[-1].system
