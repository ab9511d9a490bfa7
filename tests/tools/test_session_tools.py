"""The workspace tools inside real turns: edited-file carryover shown to the next window
after a rollover or a compaction and cleared by /clear --soft (R4, R10, R21), and the plan
agent's narrowed tool set (R12). What the provider saw is read back from the requestLog."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from segue import RolledOver, make_row
from segue._policy import may_use
from segue._tools.carryover_file import carryover_path
from tests.session.helpers import Harness, echo, harness

WINDOW = 8000  # reserve 2000, hard ceiling 6000; threshold 50 rolls over at 4400
SECTION = "# Files edited earlier in this session"


def write(path: str, content: str) -> dict[str, Any]:
    return {"name": "file_write", "input": {"path": path, "content": content}}


def rolls_over(path: str, content: str) -> list[dict[str, Any]]:
    """A turn that writes ``path``, then fills the window so the next settled step rolls over."""
    return [
        {"toolCalls": [write(path, content)]},
        {"toolCalls": [echo("beta", 1400)]},
        {"toolCalls": [echo("gamma", 1400)]},
        {"text": f"wrote {path}"},
    ]


def persisted(h: Harness) -> Any:
    return json.loads(carryover_path(h.layout).read_text())


def test_rollover_hands_the_edited_files_to_the_next_window(h16: Harness) -> None:
    session = h16.session(threshold=50, workspace_tools=True)
    result = session.send("write a.txt")
    assert result.status == "completed" and result.rollovers == 1
    assert (h16.workdir / "a.txt").read_text() == "hello"
    requests = h16.requests()
    assert all(SECTION not in r.system for r in requests[:3])
    after = requests[3].system
    assert SECTION in after
    assert "- a.txt: 5 bytes, sha256 2cf24dba5fb0" in after
    # Persisted for the new window, pending edits cleared before the append.
    state = persisted(h16)
    rolled = next(e for e in h16.events if isinstance(e, RolledOver))
    boundary = next(r for r in h16.rows() if r.metadata.get("rolloverId"))
    assert state["edits"] == [] and state["carried"]["boundaryId"] == boundary.id
    assert rolled.window_id == f"w:{boundary.sequence}" == session.window_id()
    # The next send in the same window sees the same list: the system text is stable.
    assert session.send("and now?").status == "completed"
    assert h16.requests()[-1].system == after


def test_clear_soft_clears_the_carryover(h16: Harness) -> None:
    session = h16.session(threshold=50, workspace_tools=True)
    session.send("write a.txt")
    assert session.clear_soft() is True
    assert not carryover_path(h16.layout).exists()
    assert session.send("after the clear").status == "completed"
    assert SECTION not in h16.requests()[-1].system


def test_carryover_accumulates_across_rollovers_newest_first(tmp_path: Path) -> None:
    h = harness(
        tmp_path, [*rolls_over("a.txt", "1"), *rolls_over("b.txt", "22")], context_window=WINDOW
    )
    session = h.session(threshold=50, workspace_tools=True)
    assert session.send("first").rollovers == 1
    # the second turn's window starts with the first rollover's carried step (its copies of
    # the last call and result), so it may roll over once more on the way
    assert session.send("second").rollovers >= 1
    system = h.requests()[-1].system
    assert system.index("- b.txt: 2 bytes") < system.index("- a.txt: 1 bytes")


class Crash(Exception):
    pass


def _crash_at(phase: str) -> Any:
    def checkpoint(name: str) -> None:
        if name == phase:
            raise Crash(name)

    return checkpoint


@pytest.mark.parametrize("phase", ["fit", "append"])
def test_an_admission_that_fails_loses_no_carryover(tmp_path: Path, phase: str) -> None:
    script = [*rolls_over("a.txt", "hello")[:3], {"toolCalls": [echo("x", 1)]}, {"text": "ok"}]
    h = harness(tmp_path, script, context_window=WINDOW)
    crashing = h.session(threshold=50, workspace_tools=True, checkpoint=_crash_at(phase))
    with pytest.raises(Crash):
        crashing.send("write a.txt")
    state = persisted(h)
    if phase == "fit":  # before cleanup: untouched
        assert [e["path"] for e in state["edits"]] == ["a.txt"] and state["carried"] is None
    else:  # cleanup ran, the boundary never reached the transcript
        assert state["edits"] == [] and state["carried"]["files"][0]["path"] == "a.txt"
    assert not any(r.metadata.get("rolloverId") for r in h.rows())
    # A restarted session is still in the old window; its next rollover carries a.txt.
    restarted = h.session(threshold=50, workspace_tools=True)
    assert SECTION not in restarted.build_system()
    assert restarted.send("go on").rollovers == 1
    assert "- a.txt: 5 bytes" in h.requests()[-1].system


def test_compaction_hands_the_carryover_to_the_compacted_window(tmp_path: Path) -> None:
    script: list[dict[str, Any]] = [
        {"toolCalls": [write("c.txt", "abc")]},
        {"text": "done"},
        {"text": "Summary: wrote c.txt."},
        {"text": "continuing"},
    ]
    h = harness(tmp_path, script, context_window=WINDOW)
    session = h.session(workspace_tools=True)
    session.send("write c.txt")
    session.compact()
    assert session.send("what next?").status == "completed"
    assert "- c.txt: 3 bytes" in h.requests()[-1].system
    assert persisted(h)["edits"] == []


def test_plan_agent_reads_and_writes_only_its_plan(tmp_path: Path) -> None:
    script: list[dict[str, Any]] = [
        {
            "toolCalls": [
                write("src/app.py", "x = 1\n"),
                write("PLAN.md", "1. change app.py\n"),
                {"name": "bash", "input": {"command": "touch hacked"}},
            ]
        },
        {"text": "plan saved"},
    ]
    h = harness(tmp_path, script, context_window=WINDOW)
    session = h.session(agent="plan", workspace_tools=True)
    advertised = [t["name"] for t in session.advertised_tools()]
    assert advertised == [
        "file_read",
        "file_write",
        "file_edit",
        "file_search",
        "memory",
        "session_history",
        "new_context",
    ]
    assert may_use(session.agent.policy(), "bash")  # R12: plan's own rules still grant `.*`
    session.send("plan it")
    outputs = [p.output for p in h.rows()[1].parts if p.type == "dynamic-tool"]
    assert outputs[0]["error"]["code"] == "write_not_allowed"
    assert outputs[1]["ok"] is True
    assert outputs[2]["error"]["code"] == "tool_not_allowed"
    assert (h.workdir / "PLAN.md").exists()
    assert not (h.workdir / "src").exists() and not (h.workdir / "hacked").exists()


@pytest.fixture
def h16(tmp_path: Path) -> Harness:
    return harness(
        tmp_path,
        [*rolls_over("a.txt", "hello"), {"text": "same window"}, {"text": "after clear"}],
        context_window=WINDOW,
    )


def test_explore_is_read_only_and_custom_agents_inherit_a_profile(tmp_path: Path) -> None:
    h = harness(tmp_path, [{"text": "ok"}], context_window=WINDOW)
    explore = h.session(agent="explore", workspace_tools=True)
    names = [t["name"] for t in explore.advertised_tools()]
    assert names == ["file_read", "file_search", "memory", "session_history", "new_context"]
    assert may_use(explore.agent.policy(), "file_write")  # R12: it still inherits exec
    h.agent_file("planner", "---\nbase: plan\n---\nPlan carefully.\n")
    planner = h.session(agent="planner", workspace_tools=True)
    assert "bash" not in [t["name"] for t in planner.advertised_tools()]
    refused = planner.tools.run("file_write", {"path": "x.py", "content": ""}, planner.allowed)
    assert refused["error"]["code"] == "write_not_allowed"
    exec_session = h.session(agent="exec", workspace_tools=True)
    assert "bash" in [t["name"] for t in exec_session.advertised_tools()]


def test_a_reset_written_without_a_session_still_drops_older_edits(tmp_path: Path) -> None:
    """A manual reset appended through the store alone (no session, the carried-files record
    left in place): edits made before it are anchored below the reset's sequence number and
    are never handed on."""
    script: list[dict[str, Any]] = [{"toolCalls": [write("old.txt", "1")]}, {"text": "ok"}]
    script += rolls_over("new.txt", "2")
    h = harness(tmp_path, script, context_window=WINDOW)
    h.session(threshold=50, workspace_tools=True).send("write old.txt")
    # the row ``segue clear --soft`` writes (SPEC.md R10), appended by another writer
    reset = {"timestamp": 1, "contextBoundaryKind": "reset", "uiVisible": False}
    h.store.append([make_row("assistant", id="reset-cli", metadata=reset)])
    assert carryover_path(h.layout).exists()  # nobody deleted it ...
    session = h.session(threshold=50, workspace_tools=True)
    assert session.send("write new.txt").rollovers == 1
    system = h.requests()[-1].system
    assert "- new.txt" in system and "old.txt" not in system  # ... yet it is not stale

