"""``segue run``, ``segue clear`` and ``segue compact`` through the command line (SPEC.md §5, R10,
R16, R18): exit statuses, the ``--json`` closing object, and what reaches the transcript."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from segue import HistoryStore, Layout, Row
from segue._session.window import load_window
from segue._tools.carryover_file import CarryoverFile
from tests.front import cli, is_manual_reset, is_rollover_boundary
from tests.scripted_cli import script

WS = "runs"
CLOSING_KEYS = {"status", "reason", "windowId", "rollovers", "text", "usage"}


def segue(home: Path, *args: str, workspace: str = WS) -> Result:
    return CliRunner().invoke(cli, ["--home", str(home), "-w", workspace, *args])


def closing(result: Result) -> dict[str, Any]:
    """The last line of stdout: the ``--json`` closing object, exactly its four keys."""
    obj = json.loads(result.stdout.strip().splitlines()[-1])
    assert isinstance(obj, dict) and set(obj) == CLOSING_KEYS, obj
    assert obj["status"] in {"completed", "paused", "rejected", "error"}
    assert obj["reason"] is None or isinstance(obj["reason"], str)
    assert isinstance(obj["windowId"], str) and obj["windowId"].startswith("w:")
    assert isinstance(obj["rollovers"], int) and not isinstance(obj["rollovers"], bool)
    assert obj["text"] is None or isinstance(obj["text"], str)
    assert obj["usage"] is None or isinstance(obj["usage"], dict)
    return {key: obj[key] for key in ("status", "reason", "windowId", "rollovers")}


def closing_full(result: Result) -> dict[str, Any]:
    closing(result)  # the shape checks
    obj: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return obj


def rows(home: Path) -> list[Row]:
    return list(HistoryStore(Layout(home, WS)).rows())


def transcript_bytes(home: Path) -> bytes:
    layout = Layout(home, WS)
    return b"".join(p.read_bytes() for p in (layout.archive, layout.chat) if p.exists())


def enable_experiment(home: Path) -> None:
    result = segue(home, "settings", "set", "experiments.tokenBudget", "true")
    assert result.exit_code == 0, result.output


# -- segue run: exit statuses and the closing object -----------------------------------------------


def test_completed_run_exits_0_with_the_closing_object(
    segue_home: Path, workdir: Path, tmp_path: Path
) -> None:
    model = script(tmp_path, [{"text": "Hello from the script."}])
    result = segue(segue_home, "run", "-m", model, "--json", "hi")
    assert result.exit_code == 0, result.output
    obj = closing_full(result)
    assert obj == {
        "status": "completed",
        "reason": None,
        "windowId": "w:0",
        "rollovers": 0,
        "text": "Hello from the script.",
        "usage": obj["usage"],
    }
    # The scripted provider reports the real count of what it received, and a reply's output.
    assert obj["usage"]["inputTokens"] > 0 and obj["usage"]["outputTokens"] > 0
    assert result.stderr == ""  # --json: stdout is the closing object, no human output at all
    assert [r.role for r in rows(segue_home)] == ["user", "assistant"]


def test_plain_run_prints_the_answer_and_no_json(
    segue_home: Path, workdir: Path, tmp_path: Path
) -> None:
    model = script(tmp_path, [{"text": "Plain answer."}])
    result = segue(segue_home, "run", "-m", model, "hi")
    assert result.exit_code == 0, result.output
    assert "Plain answer." in result.stdout
    assert '"status"' not in result.stdout


def test_rollover_is_counted_and_names_the_new_window(
    segue_home: Path, workdir: Path, tmp_path: Path
) -> None:
    enable_experiment(segue_home)
    big = {"inputTokens": 6500, "outputTokens": 10}
    model = script(tmp_path, [{"text": "long answer", "usage": big}, {"text": "fresh"}])
    assert closing(segue(segue_home, "run", "-m", model, "--json", "one"))["rollovers"] == 0
    result = segue(segue_home, "run", "-m", model, "--json", "two")
    assert result.exit_code == 0, result.output
    obj = closing_full(result)
    (boundary,) = [r for r in rows(segue_home) if is_rollover_boundary(r)]
    assert obj["usage"]["inputTokens"] > 0
    assert {k: v for k, v in obj.items() if k != "usage"} == {
        "status": "completed",
        "reason": None,
        "windowId": f"w:{boundary.sequence}",
        "rollovers": 1,
        "text": obj["text"],
    }


def test_provider_overflow_with_automatic_handling_off_pauses_with_exit_3(
    segue_home: Path, workdir: Path, tmp_path: Path
) -> None:
    model = script(tmp_path, [{"error": {"kind": "context_overflow", "message": "too long"}}])
    result = segue(segue_home, "run", "-m", model, "--json", "hi")
    assert result.exit_code == 3, result.output
    obj = closing(result)
    assert obj["status"] == "paused"
    assert obj["reason"] is not None and "too long" in obj["reason"]
    assert f"segue: paused: {obj['reason']}" in result.stderr


def test_hard_ceiling_with_threshold_100_pauses_with_exit_3(
    segue_home: Path, workdir: Path, tmp_path: Path
) -> None:
    assert segue(segue_home, "settings", "set", "threshold.default", "100").exit_code == 0
    model = script(
        tmp_path,
        [
            {
                "toolCalls": [{"name": "memory", "input": {"command": "view", "path": "/"}}],
                "usage": {"inputTokens": 7000, "outputTokens": 10},
            },
            {"text": "never reached"},
        ],
    )
    result = segue(segue_home, "run", "-m", model, "--json", "hi")
    assert result.exit_code == 3, result.output
    obj = closing(result)
    assert obj["status"] == "paused" and obj["rollovers"] == 0
    assert obj["reason"] is not None and "hard ceiling" in obj["reason"]
    assert "hard ceiling" in result.stderr


def test_oversized_prompt_is_rejected_with_exit_3_and_quarantined(
    segue_home: Path, workdir: Path, tmp_path: Path
) -> None:
    model = script(tmp_path, [{"text": "never sent"}], window=1000)
    result = segue(segue_home, "run", "-m", model, "--json", " ".join(["huge"] * 2000))
    assert result.exit_code == 3, result.output
    obj = closing(result)
    assert obj["status"] == "rejected"
    assert obj["reason"] is not None and "fresh context window" in obj["reason"]
    assert "segue: rejected:" in result.stderr
    (row,) = rows(segue_home)
    assert row.metadata["contextBudgetRejected"] is True


def test_exhausted_script_is_an_error_with_exit_1(
    segue_home: Path, workdir: Path, tmp_path: Path
) -> None:
    model = script(tmp_path, [{"text": "the only answer"}])
    assert segue(segue_home, "run", "-m", model, "--json", "one").exit_code == 0
    # The position persists under SEGUE_HOME/providers: the second run finds the script empty.
    result = segue(segue_home, "run", "-m", model, "--json", "two")
    assert result.exit_code == 1, result.output
    obj = closing(result)
    assert obj["status"] == "error"
    assert obj["reason"] is not None and "no response for step 2" in obj["reason"]
    assert "segue: error:" in result.stderr


def test_provider_error_is_exit_1(segue_home: Path, workdir: Path, tmp_path: Path) -> None:
    model = script(tmp_path, [{"error": {"kind": "provider", "message": "upstream 500"}}])
    result = segue(segue_home, "run", "-m", model, "--json", "hi")
    assert result.exit_code == 1, result.output
    assert closing(result)["status"] == "error"
    assert "upstream 500" in result.stderr


def test_run_without_a_model_is_bad_usage(segue_home: Path, workdir: Path) -> None:
    result = segue(segue_home, "run", "--json", "hi")
    assert result.exit_code == 2, result.output
    assert result.stderr.count("no model") == 1  # printed once
    # §5: the closing object also when the run fails before its turn starts.
    assert closing(result) == {"status": "error", "reason": result.stderr.split("error: ")[1]
                               .strip(), "windowId": "w:0", "rollovers": 0}
    assert rows(segue_home) == []


def test_bad_workspace_id_is_bad_usage(segue_home: Path, workdir: Path, tmp_path: Path) -> None:
    model = script(tmp_path, [{"text": "never"}])
    result = segue(segue_home, "run", "-m", model, "hi", workspace="not a valid id!")
    assert result.exit_code == 2, result.output
    assert "invalid workspace id" in result.stderr


def test_unknown_model_is_bad_usage(segue_home: Path, workdir: Path) -> None:
    result = segue(segue_home, "run", "-m", "nonsense", "hi")
    assert result.exit_code == 2, result.output


def test_run_without_a_prompt_is_bad_usage(segue_home: Path, workdir: Path) -> None:
    assert segue(segue_home, "run").exit_code == 2


# -- segue clear -----------------------------------------------------------------------------------


def test_clear_soft_is_a_noop_when_empty_then_writes_a_manual_reset(
    segue_home: Path, workdir: Path, tmp_path: Path
) -> None:
    empty = segue(segue_home, "clear", "--soft")
    assert empty.exit_code == 0, empty.output
    assert "nothing to clear" in empty.stdout
    assert rows(segue_home) == []

    model = script(tmp_path, [{"text": "an answer"}])
    assert segue(segue_home, "run", "-m", model, "secret plan").exit_code == 0
    cleared = segue(segue_home, "clear", "--soft")
    assert cleared.exit_code == 0, cleared.output
    assert "cleared" in cleared.stdout
    stored = rows(segue_home)
    assert len(stored) == 3 and is_manual_reset(stored[-1])
    assert stored[-1].parts == ()

    again = segue(segue_home, "clear", "--soft")
    assert again.exit_code == 0 and "nothing to clear" in again.stdout
    assert len(rows(segue_home)) == 3


def test_hard_clear_refuses_without_yes_when_not_interactive(
    segue_home: Path, workdir: Path, tmp_path: Path
) -> None:
    model = script(tmp_path, [{"text": "keep me"}])
    assert segue(segue_home, "run", "-m", model, "hi").exit_code == 0
    before = transcript_bytes(segue_home)
    refused = segue(segue_home, "clear")  # CliRunner's stdin is not a terminal
    assert refused.exit_code == 2, refused.output
    assert "--yes" in refused.stderr
    assert transcript_bytes(segue_home) == before

    destroyed = segue(segue_home, "clear", "--yes")
    assert destroyed.exit_code == 0, destroyed.output
    assert "destroyed" in destroyed.stdout
    assert rows(segue_home) == []
    assert transcript_bytes(segue_home) == b""


# -- segue compact ---------------------------------------------------------------------------------


def test_compact_commits_the_summary_as_a_compaction_boundary(
    segue_home: Path, workdir: Path, tmp_path: Path
) -> None:
    model = script(
        tmp_path,
        [{"text": "We talked about the parser."}, {"text": "Summary: parser work, tests left."}],
    )
    assert segue(segue_home, "run", "-m", model, "fix the parser").exit_code == 0
    result = segue(segue_home, "compact", "-m", model)
    assert result.exit_code == 0, result.output
    last = rows(segue_home)[-1]
    assert last.flag("compactionBoundary")
    assert "parser work, tests left" in last.text
    assert f"w:{last.sequence}" in result.stdout


@pytest.mark.parametrize("summary", ["", "   \n"])
def test_compact_with_an_empty_summary_exits_3_and_commits_nothing(
    segue_home: Path, workdir: Path, tmp_path: Path, summary: str
) -> None:
    model = script(tmp_path, [{"text": "an answer"}, {"text": summary}])
    assert segue(segue_home, "run", "-m", model, "hello").exit_code == 0
    before = transcript_bytes(segue_home)
    result = segue(segue_home, "compact", "-m", model)
    assert result.exit_code == 3, result.output
    assert "empty summary" in result.stderr
    assert transcript_bytes(segue_home) == before


def test_compact_of_an_empty_window_exits_3(
    segue_home: Path, workdir: Path, tmp_path: Path
) -> None:
    model = script(tmp_path, [{"text": "an answer"}, {"text": "never asked"}])
    assert segue(segue_home, "run", "-m", model, "hello").exit_code == 0
    assert segue(segue_home, "clear", "--soft").exit_code == 0
    before = rows(segue_home)
    result = segue(segue_home, "compact", "-m", model)
    assert result.exit_code == 3, result.output
    assert "nothing to compact" in result.stderr
    assert rows(segue_home) == before


def test_compact_of_a_workspace_never_used_exits_1_and_creates_nothing(
    segue_home: Path, workdir: Path, tmp_path: Path
) -> None:
    model = script(tmp_path, [{"text": "never asked"}])
    result = segue(segue_home, "compact", "-m", model)
    assert result.exit_code == 1, result.output
    assert "nothing has run there yet" in result.stderr
    assert not (segue_home / "sessions").exists()


@pytest.mark.parametrize("flags", [["--soft"], ["--yes"]])
def test_clear_forgets_the_edited_file_carryover(
    segue_home: Path, workdir: Path, tmp_path: Path, flags: list[str]
) -> None:
    """R10: a cleared context hands no edited files to the next window, whichever clear."""
    model = script(tmp_path, [{"text": "an answer"}])
    assert segue(segue_home, "run", "-m", model, "edit it").exit_code == 0
    layout = Layout(segue_home, WS)
    store = HistoryStore(layout)
    (workdir / "edited.txt").write_text("changed\n")
    carryover = CarryoverFile(layout, store)
    carryover.record_edit(workdir, "edited.txt")
    assert carryover.path.exists()

    result = segue(segue_home, "clear", *flags)
    assert result.exit_code == 0, result.output
    assert not carryover.path.exists()
    handed = carryover.handoff(load_window(store), "next-boundary").snapshot()
    assert handed == ()
