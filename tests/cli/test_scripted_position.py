"""The scripted provider's position across ``segue run`` processes: kept per workspace and
script, started over by another workspace, an edited script or ``segue clear --yes``, kept by
``clear --soft``; running out says how to start over."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from segue import Layout
from segue._providers.scripted import FilePosition, forget_positions


def segue(
    home: Path, cwd: Path, *args: str, workspace: str = "ws"
) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k != "SEGUE_HOME"}
    return subprocess.run(
        [sys.executable, "-m", "segue", "--home", str(home), "-w", workspace, *args],
        cwd=cwd, env=environ, capture_output=True, text=True, timeout=120, check=False,
    )


def write(path: Path, *texts: str) -> str:
    responses = [{"text": t} for t in texts]
    path.write_text(json.dumps({"contextWindow": 8000, "encoding": "o200k_base",
                                "responses": responses}))
    return f"scripted:{path}"


def reply(proc: subprocess.CompletedProcess[str]) -> str | None:
    assert proc.returncode in (0, 1), proc.stderr
    text: str | None = json.loads(proc.stdout.strip().splitlines()[-1])["text"]
    return text


def test_the_position_is_kept_per_workspace_and_restarted_by_a_hard_clear(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    model = write(tmp_path / "s.json", "first", "second")
    assert reply(segue(home, tmp_path, "run", "--json", "-m", model, "a")) == "first"
    assert reply(segue(home, tmp_path, "run", "--json", "-m", model, "b")) == "second"
    # Another workspace is another conversation: it starts at the first response.
    other = segue(home, tmp_path, "run", "--json", "-m", model, "c", workspace="other")
    assert reply(other) == "first"

    exhausted = segue(home, tmp_path, "run", "--json", "-m", model, "d")
    assert exhausted.returncode == 1
    assert "has no response for step 3: the script has 2 response(s)" in exhausted.stderr
    assert "segue clear --yes" in exhausted.stderr
    assert exhausted.stderr.count("no response for step 3") == 1  # printed once

    # A soft clear keeps the conversation going: the script stays where it was.
    assert segue(home, tmp_path, "clear", "--soft").returncode == 0
    assert segue(home, tmp_path, "run", "--json", "-m", model, "e").returncode == 1
    # A hard clear destroys the conversation the script played: it starts over.
    cleared = segue(home, tmp_path, "clear", "--yes")
    assert cleared.returncode == 0, cleared.stderr
    assert reply(segue(home, tmp_path, "run", "--json", "-m", model, "f")) == "first"
    # The other workspace's position was not touched.
    assert reply(segue(home, tmp_path, "run", "--json", "-m", model, "g",
                       workspace="other")) == "second"


def test_the_state_file_names_its_script_and_an_edit_starts_over(tmp_path: Path) -> None:
    home = tmp_path / "home"
    script = tmp_path / "s.json"
    model = write(script, "one", "two")
    assert reply(segue(home, tmp_path, "run", "--json", "-m", model, "a")) == "one"
    (state,) = Layout(home, "ws").script_positions.glob("scripted-*.json")
    assert json.loads(state.read_text()) == {"script": str(script.resolve()), "next": 1}
    write(script, "edited")
    assert reply(segue(home, tmp_path, "run", "--json", "-m", model, "b")) == "edited"


def test_a_relative_script_path_keeps_its_position_from_the_same_directory(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    write(tmp_path / "s.json", "one", "two")
    assert reply(segue(home, tmp_path, "run", "--json", "-m", "scripted:s.json", "a")) == "one"
    assert reply(segue(home, tmp_path, "run", "--json", "-m", "scripted:s.json", "b")) == "two"


def test_forget_positions_removes_only_state_files(tmp_path: Path) -> None:
    state = tmp_path / "state"
    assert forget_positions(state) == 0  # nothing kept yet: nothing to do
    position = FilePosition(state / "scripted-abc.json", script=tmp_path / "s.json")
    assert [position.take(), position.take()] == [0, 1]
    (state / "notes.txt").write_text("not ours")
    assert forget_positions(state) == 1
    assert position.take() == 0
    assert (state / "notes.txt").read_text() == "not ours"
