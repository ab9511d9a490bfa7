"""``segue.open_session``: configured by arguments for one session, nothing written to the
settings file; approval through a callback (R38)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import segue
from segue._errors import SettingsError, UsageError
from tests.api.helpers import bash, script, tool_outputs


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def work(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


def test_settings_apply_to_this_session_only(tmp_path: Path, home: Path, work: Path) -> None:
    home.mkdir()
    (home / "settings.json").write_text(json.dumps(
        {"threshold": {"default": 60, "scripted:x": 90}, "experiments": {"tokenBudget": False}}))
    before = (home / "settings.json").read_bytes()
    model = script(tmp_path / "s.json", {"text": "hi"})
    with segue.open_session("ws", home=home, workdir=work, model=model, experiment=True,
                            threshold=80) as session:
        assert session.config.experiment is True
        assert session.config.threshold == 80  # wins over the file's default and per-model
    with segue.open_session("ws", home=home, workdir=work, model=model,
                            settings={"threshold.default": 55}) as session:
        assert session.config.experiment is False  # from the file
        assert session.config.threshold == 55
    with segue.open_session("ws", home=home, workdir=work, model=model) as session:
        assert session.config.threshold == 60
    assert (home / "settings.json").read_bytes() == before


def test_bad_settings_name_the_key(tmp_path: Path, home: Path, work: Path) -> None:
    model = script(tmp_path / "s.json", {"text": "hi"})
    with pytest.raises(SettingsError, match="unknown setting 'nope'"):
        segue.open_session("ws", home=home, workdir=work, model=model, settings={"nope": 1})
    with pytest.raises(SettingsError, match=r"^threshold must be an integer percent"):
        segue.open_session("ws", home=home, workdir=work, model=model, threshold=72)
    with pytest.raises(UsageError, match="approval mode must be one of"):
        segue.open_session("ws", home=home, workdir=work, model=model, approve="sometimes")
    assert not (home / "settings.json").exists()


def test_no_model_speaks_python(home: Path, work: Path) -> None:
    with pytest.raises(UsageError) as caught:
        segue.open_session("ws", home=home, workdir=work)
    assert str(caught.value) == "no model: pass model='provider:name', or set the model setting"
    assert "-m provider:name" in caught.value.cli_message


def test_workspace_defaults_and_layout(tmp_path: Path, home: Path, work: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # A relative scripted path is the caller's (the current directory), not workdir's.
    monkeypatch.chdir(tmp_path)
    script(tmp_path / "s.json", {"text": "hi"})
    with segue.open_session(home=home, workdir=work, model="scripted:s.json") as session:
        assert session.layout.workspace_id.startswith("work-")
        assert session.send("hello").text == "hi"
    layout = segue.Layout(home, "laid-out")
    with segue.open_session(layout, workdir=work, model="scripted:s.json") as session:
        assert session.layout == layout
    with pytest.raises(UsageError, match="give one"):
        segue.open_session(layout, home=tmp_path / "elsewhere", model="scripted:s.json")
    with pytest.raises(segue.SegueError, match="invalid workspace id"):
        segue.open_session("no spaces", home=home, model="scripted:s.json")
    with pytest.raises(UsageError, match=r"workdir .*typo is not a directory"):
        segue.open_session("ws", home=home, workdir=tmp_path / "typo", model="scripted:s.json")
    assert not (home / "sessions" / "ws").exists()  # nothing was created for it
    monkeypatch.setenv("HOME", str(tmp_path))
    with segue.open_session("tilde", home="~/home", workdir="~/work",
                            model="scripted:s.json") as session:
        assert session.layout.home == home


def test_keep_script_position(tmp_path: Path, home: Path, work: Path) -> None:
    model = script(tmp_path / "s.json", {"text": "one"}, {"text": "two"})
    for _ in range(2):  # each session starts the script over
        with segue.open_session("ws", home=home, workdir=work, model=model) as session:
            assert session.send("hi").text == "one"
    texts = []
    for _ in range(2):
        with segue.open_session("kept", home=home, workdir=work, model=model,
                                keep_script_position=True) as session:
            texts.append(session.send("hi").text)
    assert texts == ["one", "two"]


def _run_bash(tmp_path: Path, home: Path, work: Path, workspace: str,
              command: str = "echo made > made.txt", **kw: object) -> segue.TurnResult:
    model = script(tmp_path / f"{workspace}.json", bash(command), {"text": "done"})
    with segue.open_session(workspace, home=home, workdir=work, model=model,
                            **kw) as session:  # type: ignore[arg-type]
        return session.send("make a file")


def test_approver_sees_the_exact_command_and_answers_with_a_bool(
        tmp_path: Path, home: Path, work: Path) -> None:
    asked: list[segue.ApprovalRequest] = []

    def no(request: segue.ApprovalRequest) -> bool:
        asked.append(request)
        return False

    assert _run_bash(tmp_path, home, work, "declined", approver=no).status == "completed"
    assert [(r.tool, r.preview, r.subject) for r in asked] == [
        ("bash", "echo made > made.txt", "bash:echo made > made.txt")]
    assert not (work / "made.txt").exists()
    (denied,) = tool_outputs(home, "declined")
    assert denied["error"]["code"] == "approval_denied"  # durable, in the transcript

    assert _run_bash(tmp_path, home, work, "allowed", approver=lambda r: True).text == "done"
    assert (work / "made.txt").read_text() == "made\n"


def test_always_remembers_the_pattern(tmp_path: Path, home: Path, work: Path) -> None:
    _run_bash(tmp_path, home, work, "always", "touch made.txt",
              approver=lambda r: segue.Answer.ALWAYS)
    rules = json.loads((home / "approvals" / "always.json").read_text())["rules"]
    assert [r["regex_match"] for r in rules] == [r"bash:touch made\.txt"]  # exactly the call
    (work / "made.txt").unlink()
    # Remembered: the next session runs it without asking anyone.
    _run_bash(tmp_path, home, work, "always", "touch made.txt")
    assert (work / "made.txt").exists()


def test_modes_without_an_approver(tmp_path: Path, home: Path, work: Path) -> None:
    _run_bash(tmp_path, home, work, "asks")
    (denied,) = tool_outputs(home, "asks")
    message = denied["error"]["message"]
    assert denied["error"]["code"] == "approval_denied"
    assert "nobody to ask" in message and "--approve" not in message and "segue run" not in message
    assert not (work / "made.txt").exists()
    _run_bash(tmp_path, home, work, "denies", approve="deny", approver=lambda r: True)
    assert not (work / "made.txt").exists()  # deny: the approver is not even asked
    _run_bash(tmp_path, home, work, "full", approve=segue.ApprovalMode.FULL)
    assert (work / "made.txt").exists()


@pytest.mark.parametrize("approver", [
    lambda r: "yes",  # not an Answer nor a bool
    lambda r: 1 / 0,  # raises
], ids=["wrong-type", "raises"])
def test_a_broken_approver_fails_closed(tmp_path: Path, home: Path, work: Path,
                                        approver: segue.ApproverLike) -> None:
    assert _run_bash(tmp_path, home, work, "broken", approver=approver).status == "completed"
    assert not (work / "made.txt").exists()
    (output,) = tool_outputs(home, "broken")
    assert output["ok"] is False and output["error"]["code"] == "tool_failed"


def test_async_approver(tmp_path: Path, home: Path, work: Path) -> None:
    threads: list[int] = []

    async def approve(request: segue.ApprovalRequest) -> segue.Answer:
        await asyncio.sleep(0)
        threads.append(threading.get_ident())
        return segue.Answer.YES

    # From plain sync code: awaited in the turn's thread.
    _run_bash(tmp_path, home, work, "sync-send", approver=approve)
    assert (work / "made.txt").exists() and threads == [threading.get_ident()]
    (work / "made.txt").unlink()

    # From async code: awaited on the caller's own event loop.
    async def main() -> tuple[segue.TurnResult, int]:
        model = script(tmp_path / "a.json", bash("echo made > made.txt"), {"text": "done"})
        with segue.open_session("async", home=home, workdir=work, model=model,
                                approver=approve) as session:
            return await session.asend("go"), threading.get_ident()

    result, loop_thread = asyncio.run(main())
    assert result.text == "done" and (work / "made.txt").exists()
    assert threads[1] == loop_thread


def test_the_default_workspace_is_the_command_lines(tmp_path: Path, home: Path) -> None:
    """Inside a git repository, the library's default workspace is the one `segue` uses there:
    the repository root's, from any subfolder."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src" / "pkg").mkdir(parents=True)
    model = script(tmp_path / "s.json", {"text": "hi"})
    with segue.open_session(home=home, workdir=repo / "src" / "pkg", model=model) as session:
        assert session.layout.workspace_id.startswith("repo-")
        session.send("hello")
    done = subprocess.run(
        [sys.executable, "-m", "segue", "--home", str(home), "history", "windows", "--json"],
        cwd=repo / "src", capture_output=True, text=True, check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["windows"], done.stdout
