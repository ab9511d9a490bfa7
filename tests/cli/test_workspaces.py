"""``segue workspaces``: what it lists, and that listing writes nothing."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from segue import Layout
from tests.front import cli
from tests.scripted_cli import script


def segue(home: Path, *args: str, workspace: str = "ws-a") -> Result:
    return CliRunner().invoke(cli, ["--home", str(home), "-w", workspace, *args])


def test_lists_each_workspace_with_its_dir_rows_size_and_activity(
    segue_home: Path, workdir: Path, tmp_path: Path
) -> None:
    model = script(tmp_path, [{"text": "first"}, {"text": "second"}])
    assert segue(segue_home, "run", "-m", model, "hello", workspace="ws-a").exit_code == 0
    assert segue(segue_home, "run", "-m", model, "again", workspace="ws-b").exit_code == 0
    (segue_home / "sessions" / "not a workspace id").mkdir()
    result = segue(segue_home, "workspaces", "--json")
    assert result.exit_code == 0, result.output
    listed = json.loads(result.stdout)["workspaces"]
    assert [w["workspaceId"] for w in listed] == ["ws-a", "ws-b"]
    for w in listed:
        layout = Layout(segue_home, w["workspaceId"])
        assert w["workdir"] == str(workdir.resolve())
        assert w["rows"] == 2  # the user's message and the reply
        assert w["size"] == layout.chat.stat().st_size
        assert w["lastActivity"] == layout.chat.stat().st_mtime_ns // 1_000_000
    plain = segue(segue_home, "workspaces")
    assert plain.exit_code == 0
    assert "ws-a" in plain.output and str(workdir.resolve()) in plain.output


def test_listing_a_missing_home_creates_nothing(tmp_path: Path) -> None:
    home = tmp_path / "nowhere"
    result = segue(home, "workspaces", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"workspaces": []}
    assert not home.exists()
