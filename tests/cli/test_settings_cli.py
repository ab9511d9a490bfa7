"""``segue settings get | set | unset`` from the command line: what is printed, what the exit
status is, and what ends up in settings.json (or that nothing was written)."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from segue._settings import KEYS, MODEL_KEYS
from tests.front import cli

EXAMPLES = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def segue(home: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--home", str(home), "-w", "ws", *args])


@contextmanager
def fresh_home() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as tmp:
        yield Path(tmp) / "home"


def stored(home: Path) -> object:
    return json.loads((home / "settings.json").read_text())


def test_get_prints_the_value_or_the_default(tmp_path: Path) -> None:
    home = tmp_path / "home"
    default = segue(home, "settings", "get", "threshold.default")
    assert (default.exit_code, default.stdout) == (0, "70\n")
    assert not home.exists()  # a read: nothing created
    assert segue(home, "settings", "set", "model", "openai:gpt-4.1").exit_code == 0
    assert segue(home, "settings", "set", "experiments.tokenBudget", "true").exit_code == 0
    model = segue(home, "settings", "get", "model")
    assert (model.exit_code, model.stdout) == (0, "openai:gpt-4.1\n")  # text as it is
    flag = segue(home, "settings", "get", "experiments.tokenBudget")
    assert (flag.exit_code, flag.stdout) == (0, "true\n")  # anything else as JSON


def test_get_of_a_key_without_value_or_default_exits_1(tmp_path: Path) -> None:
    home = tmp_path / "home"
    result = segue(home, "settings", "get", "fallbackModel")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert "fallbackModel is not set" in result.stderr
    own = segue(home, "settings", "get", "threshold.openai:gpt-4.1")
    assert own.exit_code == 1
    assert "threshold.default applies (70)" in own.stderr  # what does apply, then
    assert not home.exists()


def test_unset_restores_the_default_and_unset_again_writes_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert segue(home, "settings", "set", "threshold.default", "50").exit_code == 0
    assert segue(home, "settings", "set", "approval", "deny").exit_code == 0
    result = segue(home, "settings", "unset", "threshold.default")
    assert result.exit_code == 0, result.output
    assert "threshold.default unset; default: 70" in result.stdout
    assert stored(home) == {"approval": "deny"}
    assert segue(home, "settings", "get", "threshold.default").stdout == "70\n"
    before = (home / "settings.json").stat().st_mtime_ns
    again = segue(home, "settings", "unset", "threshold.default")
    assert again.exit_code == 0
    assert "was not set; nothing changed" in again.stdout
    assert (home / "settings.json").stat().st_mtime_ns == before
    none = segue(home, "settings", "unset", "approval")
    assert "approval unset (it has no default)" in none.stdout
    assert stored(home) == {}


def test_unset_on_a_fresh_home_creates_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    result = segue(home, "settings", "unset", "model")
    assert result.exit_code == 0
    assert not home.exists()


def test_unset_removes_a_key_a_newer_segue_wrote(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.json").write_text('{"future": {"knob": 3}, "model": "openai:gpt-4.1"}')
    assert segue(home, "settings", "get", "future.knob").stdout == "3\n"
    assert segue(home, "settings", "unset", "future.knob").exit_code == 0
    assert stored(home) == {"model": "openai:gpt-4.1"}


KEY_CHARS = st.characters(min_codepoint=33, max_codepoint=126)


@EXAMPLES
@given(st.text(KEY_CHARS, min_size=1, max_size=20))
def test_unknown_keys_are_usage_errors_for_get_and_unset(key: str) -> None:
    known = key in KEYS or key.startswith(tuple(MODEL_KEYS))
    if known or key.startswith("-"):
        return
    with fresh_home() as home:
        for command in ("get", "unset"):
            result = segue(home, "settings", command, key)
            assert result.exit_code == 2, (command, key, result.output)
            assert "unknown setting" in result.stderr
            assert len(result.stderr.strip().splitlines()) == 1
        assert not home.exists()


@EXAMPLES
@given(st.integers(min_value=-10_000, max_value=-1))
def test_a_negative_value_needs_no_double_dash(value: int) -> None:
    """`settings set KEY -5` reaches the key's own check (it is not taken for an option)."""
    with fresh_home() as home:
        result = segue(home, "settings", "set", "threshold.default", str(value))
        assert result.exit_code == 2
        assert f"steps of 5 (100 turns automatic rollover off), not {value}" in result.stderr
        minutes = segue(home, "settings", "set", "idleCompactionMinutes", str(value))
        assert f"whole number of minutes >= 1, not {value}" in minutes.stderr
        assert not (home / "settings.json").exists()  # refused: nothing written


@EXAMPLES
@given(st.sampled_from(range(0, 101, 5)), st.sampled_from(["threshold.default",
                                                            "threshold.openai:gpt-4.1",
                                                            "threshold.scripted:x.json"]))
def test_set_get_unset_round_trip(value: int, key: str) -> None:
    with fresh_home() as home:
        assert segue(home, "settings", "set", key, str(value)).exit_code == 0
        assert segue(home, "settings", "get", key).stdout == f"{value}\n"
        assert segue(home, "settings", "unset", key).exit_code == 0
        after = segue(home, "settings", "get", key)
        if key == "threshold.default":
            assert after.stdout == "70\n"
        else:
            assert after.exit_code == 1


def test_set_help_lists_every_key_and_family() -> None:
    result = CliRunner().invoke(cli, ["settings", "set", "--help"])
    assert result.exit_code == 0
    for key in KEYS:
        assert f"\n    {key} " in result.stdout, key
    for prefix in MODEL_KEYS:
        assert f"\n    {prefix}<provider:model> " in result.stdout, prefix
    assert max(len(line) for line in result.stdout.splitlines()) <= 80


SEGMENT = st.text(st.characters(whitelist_categories=["Ll", "Nd"]), min_size=1, max_size=8)


@EXAMPLES
@given(parts=st.lists(st.one_of(SEGMENT, st.just("..")), min_size=1, max_size=4),
       key=st.sampled_from(["model", "fallbackModel"]))
def test_a_relative_scripted_path_is_stored_absolute(
    parts: list[str], key: str, workdir: Path
) -> None:
    relative = "/".join([*parts, "script.json"])
    with fresh_home() as home:
        result = segue(home, "settings", "set", key, f"scripted:{relative}")
        assert result.exit_code == 0, result.output
        want = f"scripted:{os.path.normpath(workdir / relative)}"
        assert stored(home) == {key: want}
        assert segue(home, "settings", "get", key).stdout == want + "\n"


def test_scripted_paths_absolute_or_home_relative(tmp_path: Path, workdir: Path) -> None:
    home = tmp_path / "home"
    segue(home, "settings", "set", "model", f"scripted:{tmp_path}/a.json")
    assert stored(home) == {"model": f"scripted:{tmp_path}/a.json"}
    segue(home, "settings", "set", "model", "scripted:~/b.json")
    assert stored(home) == {"model": f"scripted:{Path.home() / 'b.json'}"}
    segue(home, "settings", "set", "model", "openai:gpt-4.1")  # other providers: as typed
    assert stored(home) == {"model": "openai:gpt-4.1"}
    bad = segue(home, "settings", "set", "model", "scripted:")
    assert bad.exit_code == 2  # still refused, not turned into the working directory
    del workdir


def _home_with_typo(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.json").write_text('{"modle": "openai:gpt-4o", "threshold": {"default": 60}}')
    return home


def test_an_unknown_key_in_the_file_is_reported_not_silently_ignored(tmp_path: Path) -> None:
    import subprocess
    import sys

    home = _home_with_typo(tmp_path)
    (tmp_path / "s.json").write_text(
        '{"contextWindow": 8000, "encoding": "o200k_base", "responses": [{"text": "ok"}]}')
    done = subprocess.run(
        [sys.executable, "-m", "segue", "--home", str(home), "-w", "ws", "run", "-m",
         f"scripted:{tmp_path / 's.json'}", "hi"],
        capture_output=True, text=True, timeout=60, check=False, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    notes = [line for line in done.stderr.splitlines() if "modle" in line]
    assert len(notes) == 1  # once, however often the file is read
    assert "'modle' is not a setting segue knows (did you mean 'model'?)" in notes[0]
    shown = CliRunner().invoke(cli, ["--home", str(home), "settings", "show"])
    assert "modle = \"openai:gpt-4o\"  [ignored: 'modle' is not a setting" in shown.output


def test_get_and_unset_of_an_unknown_key_are_refused_like_set(tmp_path: Path) -> None:
    home = tmp_path / "home"
    for command in (["get", "modle"], ["unset", "modle"], ["set", "modle", "x"]):
        result = CliRunner().invoke(cli, ["--home", str(home), "settings", *command])
        assert result.exit_code == 2, (command, result.output)
        assert "unknown setting 'modle'" in result.stderr
        assert "unset (it has no default)" not in result.output
    assert not home.exists()


def test_unset_removes_a_typo_from_the_file_and_says_what_it_was(tmp_path: Path) -> None:
    home = _home_with_typo(tmp_path)
    result = CliRunner().invoke(cli, ["--home", str(home), "settings", "unset", "modle"])
    assert result.exit_code == 0, result.output
    assert "'modle' is not a setting segue knows (did you mean 'model'?); removed it" in (
        result.output)
    assert json.loads((home / "settings.json").read_text()) == {"threshold": {"default": 60}}
