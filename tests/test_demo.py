"""``segue demo``: checked from outside (the command, its JSON, the files it leaves) and its pure
parts (planning, the replay tape, detail choice, sizing, verification)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec
import pytest

import segue._demo.run as demo_module
from segue import HistoryStore, Layout, Part, Row, make_row
from segue._context.boundaries import is_strict_rollover, item_id, split_windows
from segue._demo.detail import choose_detail
from segue._demo.plan import CLOSING_TEXT, CONTINUE_PROMPT, RecordedCall, plan_turns
from segue._demo.replay import REPLAY_LABEL, Tape
from segue._demo.run import DEFAULT_TRAJECTORY, verify_retrieval
from segue._demo.sizing import Plan, Sizes, choose_plan
from segue._demo.trajectory import packaged_names
from segue._errors import DemoFailed
from segue._render.lines import ROLLOVER_DIVIDER
from segue._views.project import display
from tests.front import main

WORKING = [
    "i_got_id_demo__web",
    "katy__crypto",
    "pydicom__pydicom-1458__gpt4__swe-bench-dev-easy_first_only__default",
]
TOO_SHORT = "6e44b9__sweagenttestrepo-1c2844__gpt4__swe-agent-test-repo__default_from_url"


def _run_cli(args: Sequence[str], tmp: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """``python -m segue ...`` in a fresh process, from an unrelated directory."""
    environ = {k: v for k, v in os.environ.items() if k not in ("SEGUE_HOME", "TMPDIR")}
    environ.update(env)
    return subprocess.run(
        [sys.executable, "-m", "segue", *args],
        cwd=tmp,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _rows(home: Path, workspace: str = "demo") -> list[Row]:
    return list(HistoryStore(Layout(home, workspace)).rows())


def _history_outputs(rows: Sequence[Row], action: str) -> list[Any]:
    return [
        p.output
        for r in rows
        for p in r.parts
        if p.toolName == "session_history" and isinstance(p.input, dict)
        and p.input.get("action") == action
    ]


# -- the command, end to end -------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], str]:
    """One real ``segue --home H demo --json`` run shared by the end-to-end checks."""
    tmp = tmp_path_factory.mktemp("demo")
    home = tmp / "home"
    proc = _run_cli(["--home", str(home), "demo", "--json"], tmp, SEGUE_HOME=str(tmp / "unused"))
    assert proc.returncode == 0, proc.stderr
    assert not (tmp / "unused").exists()  # --home wins over SEGUE_HOME
    return home, json.loads(proc.stdout), proc.stderr


def test_transcript_has_at_least_two_strict_rollovers_before_the_look_back(
    demo_run: tuple[Path, dict[str, Any], str],
) -> None:
    home, summary, _ = demo_run
    rows = _rows(home)
    question = next(i for i, r in enumerate(rows) if r.role == "user" and
                    r.text.startswith("Before we wrap up"))
    before = [r for r in rows[:question] if is_strict_rollover(r)]
    assert len(before) >= 2
    assert summary["replayRollovers"] == len(before)
    assert summary["rollovers"] == sum(1 for r in rows if is_strict_rollover(r))
    windows = split_windows(rows)
    assert [w.window_id for w in windows] == [w["windowId"] for w in summary["windows"]]
    assert summary["ok"] is True and summary["kept"] is True


def test_session_history_result_holds_the_detail_from_w0_only(
    demo_run: tuple[Path, dict[str, Any], str],
) -> None:
    home, summary, _ = demo_run
    retrieval = summary["retrieval"]
    detail, wanted = retrieval["detail"], retrieval["itemId"]
    assert retrieval["found"] is True and retrieval["windowId"] == "w:0"
    rows = _rows(home)
    windows = split_windows(rows)
    # The item read back is a replayed tool result of the first window ...
    source = [r for r in windows[0].rows if item_id(r) == wanted]
    assert len(source) == 1
    outputs = [p.output for p in source[0].parts if isinstance(p.output, str)]
    assert any(o.startswith(REPLAY_LABEL) and detail in o for o in outputs)
    # ... the search listed it in w:0, and read_item returned the detail.
    search = _history_outputs(rows, "search")[-1]
    assert {"itemId": wanted, "windowId": "w:0"}.items() <= next(
        i for i in search["items"] if i["itemId"] == wanted
    ).items()
    read = _history_outputs(rows, "read_item")[-1]
    assert read["ok"] is True and read["items"][0]["windowId"] == "w:0"
    assert detail in read["items"][0]["text"]
    # No later window held it before the look back (only its result and the answer do).
    question = next(r for r in rows if r.text.startswith("Before we wrap up"))
    later = [r for w in windows[1:] for r in w.rows]
    before_question = later[: later.index(question)]
    assert not any(detail in display(r).text for r in before_question)
    assert detail in rows[-1].text  # the agent's answer


def test_history_verify_passes_on_the_demo_home(
    demo_run: tuple[Path, dict[str, Any], str], tmp_path: Path
) -> None:
    home, _, _ = demo_run
    proc = _run_cli(["--home", str(home), "-w", "demo", "history", "verify"], tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_request_log_shows_the_model_did_not_have_the_detail_before_searching(
    demo_run: tuple[Path, dict[str, Any], str],
) -> None:
    home, summary, _ = demo_run
    detail = summary["retrieval"]["detail"]
    requests = (home / "demo" / "lookback-requests.jsonl").read_text().splitlines()
    assert detail not in json.dumps(json.loads(requests[0]), ensure_ascii=False)
    assert detail in json.dumps(json.loads(requests[-1]), ensure_ascii=False)


def test_printed_transcript_has_dividers_meter_and_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    assert main(["--home", str(home), "demo"]) == 0
    out = capsys.readouterr().out
    rollovers = sum(1 for r in _rows(home) if is_strict_rollover(r))
    assert out.count(ROLLOVER_DIVIDER) == rollovers >= 2
    assert "% · rolls over by 75%]" in out
    assert "⚙ session_history" in out and "[replayed from the recorded run" in out
    assert f"segue --home {home} -w demo history windows" in out
    assert f"rollovers: {rollovers}" in out


def test_default_home_is_temporary_and_removed_unless_kept(tmp_path: Path) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {"TMPDIR": str(temp), "SEGUE_HOME": str(tmp_path / "user-home")}
    proc = _run_cli(["demo", "--json"], tmp_path, **env)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    # The home was removed: the summary names no path that no longer exists.
    assert summary["kept"] is False and "home" not in summary
    assert list(temp.iterdir()) == []
    assert not (tmp_path / "user-home").exists()  # never the user's own home

    proc = _run_cli(["demo", "--keep", "--json"], tmp_path, **env)
    assert proc.returncode == 0, proc.stderr
    (kept,) = temp.iterdir()
    summary = json.loads(proc.stdout)
    assert summary["kept"] is True and summary["home"] == str(kept)
    assert proc.stderr == ""  # --json: the machine's output only, no replay on stderr
    assert (kept / "sessions" / "demo" / "chat.jsonl").exists()


def test_refuses_a_workspace_that_already_has_a_transcript(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    assert main(["--home", str(home), "demo", "--json"]) == 0
    before = (home / "sessions" / "demo" / "chat.jsonl").read_bytes()
    capsys.readouterr()
    assert main(["--home", str(home), "demo"]) == 2
    assert "already has a transcript" in capsys.readouterr().err
    assert (home / "sessions" / "demo" / "chat.jsonl").read_bytes() == before
    # Another workspace in the same home is fine.
    assert main(["--home", str(home), "-w", "second", "demo", "--json"]) == 0


@pytest.mark.parametrize("name", WORKING)
def test_every_long_enough_packaged_run_rolls_over_twice_and_recovers(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    assert main(["--home", str(home), "demo", "--json", "--trajectory", name]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["trajectory"] == name and summary["replayRollovers"] >= 2
    assert summary["retrieval"]["found"] is True
    assert sum(1 for r in _rows(home) if is_strict_rollover(r)) == summary["rollovers"]


def test_packaged_runs_are_all_covered() -> None:
    assert sorted([*WORKING, TOO_SHORT]) == packaged_names()
    assert DEFAULT_TRAJECTORY in WORKING


def test_a_run_too_short_to_roll_over_twice_fails_loudly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A window the whole recorded run fits in (the shortest packaged run now fills two
    # windows: a rollover carries the step that filled the window into the next one).
    monkeypatch.setattr(demo_module, "choose_plan", lambda _sizes: Plan(200_000, 70, 0.1))
    home = tmp_path / "home"
    assert main(["--home", str(home), "demo", "--trajectory", TOO_SHORT]) == 1
    captured = capsys.readouterr()
    assert "too short" in captured.err and "Summary" not in captured.out
    assert sum(1 for r in _rows(home) if is_strict_rollover(r)) < 2


# -- verification from the transcript -----------------------------------------------------------


def _scrub(part: Part, detail: str) -> Part:
    if part.toolName != "session_history" or not isinstance(part.output, dict):
        return part
    text = json.dumps(part.output).replace(json.dumps(detail)[1:-1], "[gone]")
    return msgspec.structs.replace(part, output=json.loads(text))


def _without_detail(rows: list[Row], detail: str) -> list[Row]:
    """The rows with the detail scrubbed from every session_history result."""
    return [
        msgspec.structs.replace(row, parts=tuple(_scrub(p, detail) for p in row.parts))
        for row in rows
    ]


def test_verification_fails_when_read_item_did_not_return_the_detail(
    demo_run: tuple[Path, dict[str, Any], str],
) -> None:
    home, _, _ = demo_run
    rows = _rows(home)
    question = next(i for i, r in enumerate(rows) if r.text.startswith("Before we wrap up"))
    detail = choose_detail(rows[:question])
    assert detail is not None
    first = json.loads((home / "demo" / "lookback-requests.jsonl").read_text().splitlines()[0])
    assert verify_retrieval(rows, detail, first).found is True
    scrubbed = verify_retrieval(_without_detail(rows, detail.line), detail, first)
    assert scrubbed.found is False and scrubbed.problem
    leaked = verify_retrieval(rows, detail, {"messages": [detail.line]})
    assert leaked.found is False and "already in the model's context" in (leaked.problem or "")
    no_search = verify_retrieval(rows[:question], detail, first)
    assert no_search.found is False


# -- pure parts ----------------------------------------------------------------------------------


def _assistant(text: str, *calls: tuple[str, dict[str, Any], str]) -> Row:
    parts = [Part(type="text", text=text, state="done")] if text else []
    parts += [
        Part(type="dynamic-tool", toolCallId=f"c{n}-{text}", toolName=name, input=args,
             state="output-available", output=out)
        for n, (name, args, out) in enumerate(calls)
    ]
    return make_row("assistant", id=f"a-{text}", parts=parts)


def test_plan_turns_ends_turns_where_the_engine_would() -> None:
    rows = [
        make_row("system", "recorded harness prompt", id="s"),
        make_row("user", "task", id="u"),
        _assistant("look", ("bash", {"command": "ls"}, "a b")),
        _assistant("done"),
        _assistant("more", ("bash", {"command": "pwd"}, "/x")),
    ]
    turns = plan_turns(rows)
    assert [t.prompt for t in turns] == ["task", CONTINUE_PROMPT]
    assert [s.text for s in turns[0].steps] == ["look", "done"]
    assert [s.text for s in turns[1].steps] == ["more", CLOSING_TEXT]
    assert turns[0].steps[0].calls == (RecordedCall("c0-look", "bash", {"command": "ls"}, "a b"),)


def test_tape_answers_in_order_and_reports_going_off_script() -> None:
    calls = [RecordedCall("1", "bash", {"command": "ls"}, "a b"),
             RecordedCall("2", "bash", {"command": "pwd"}, "/x")]
    tape = Tape(calls, source="t")
    assert tape.play("bash", {"command": "ls"}) == f"{REPLAY_LABEL}\na b"
    with pytest.raises(DemoFailed, match="stopped after 1 of 2"):
        tape.check_finished()
    wrong = tape.play("bash", {"command": "rm -rf /"})
    assert wrong["error"]["code"] == "replay_mismatch"
    with pytest.raises(DemoFailed, match="off script"):
        tape.check_finished()


def _boundary(n: int) -> Row:
    return make_row("assistant", id=f"b{n}", metadata={
        "historySequence": 100 + n, "contextBoundaryKind": "reset",
        "muxMetadata": {"type": "context-window-rollover", "rolloverId": f"r{n}",
                        "reason": "mid-stream", "previousWindowId": "w:0",
                        "contextTokens": 10, "maxTokens": 100}})


def _stored(row: Row, seq: int) -> Row:
    return msgspec.structs.replace(row, metadata={**row.metadata, "historySequence": seq})


def test_choose_detail_prefers_an_error_only_in_the_first_window() -> None:
    first = _stored(_assistant(
        "run",
        ("bash", {"command": "ls -la"}, f"{REPLAY_LABEL}\nREADME.md  setup.py  package.json"),
        ("bash", {"command": "python t.py"},
         f"{REPLAY_LABEL}\nTraceback (most recent call last):\nKeyError: 'missing_key_xyz'"),
    ), 1)
    later = _stored(_assistant("again", ("bash", {"command": "ls -la"},
                                         "README.md  setup.py  package.json")), 2)
    detail = choose_detail([first, _boundary(1), later])
    assert detail is not None
    assert (detail.line, detail.query, detail.item_id) == (
        "KeyError: 'missing_key_xyz'", "python t.py", "1")
    assert "python t.py" in detail.question() and detail.line not in detail.question()
    # A line repeated in a later window is never the detail: the other line is chosen.
    echoed = _stored(_assistant("echo", ("bash", {"command": "cat log"},
                                         "KeyError: 'missing_key_xyz'")), 2)
    fallback = choose_detail([first, _boundary(1), echoed])
    assert fallback is not None and fallback.line == "README.md  setup.py  package.json"
    assert choose_detail([first, _boundary(1), echoed, _stored(later, 3)]) is None


def test_sizing_keeps_the_largest_output_whole_and_lowers_the_threshold_only_when_needed() -> None:
    even = Sizes(overhead=1200, prompts=[500], steps=[400] * 30, outputs=[300] * 30)
    plan = choose_plan(even)
    assert plan.threshold == 70 and plan.estimated_windows >= 3
    huge_output = Sizes(overhead=1200, prompts=[500], steps=[400] * 19 + [1600],
                        outputs=[300] * 19 + [1500])
    lowered = choose_plan(huge_output)
    assert lowered.threshold < 70
    hard_ceiling = lowered.context_window - min(8192, lowered.context_window // 4)
    assert hard_ceiling // 4 >= 1500


def test_temporary_directory_is_not_used_with_an_explicit_home(tmp_path: Path) -> None:
    before = set(Path(tempfile.gettempdir()).glob("segue-demo-*"))
    assert main(["--home", str(tmp_path / "h"), "demo", "--json"]) == 0
    assert set(Path(tempfile.gettempdir()).glob("segue-demo-*")) == before
