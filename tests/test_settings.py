"""Settings (R1, R2): validation, file forms, atomic writes, the label, the CLI."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from segue import SettingsError, load_settings
from segue._context.budget import rollover_label
from segue._errors import FileError
from segue._settings import (
    Settings,
    effective_threshold,
    from_obj,
    parse_cli_value,
    save_settings,
    to_obj,
    update_settings,
    write_atomic,
)
from tests.front import cli


@pytest.mark.parametrize(
    ("threshold", "label"),
    [(70, "Rolls over by 75%"), (0, "Rolls over by 5%"), (95, "Rolls over by 100%"),
     (100, "Automatic rollover off")],
)
def test_rollover_label(threshold: int, label: str) -> None:
    assert rollover_label(threshold) == label


@pytest.mark.parametrize("bad", [-5, 72, 105, True])
def test_rollover_label_refuses_bad_thresholds(bad: Any) -> None:
    with pytest.raises(ValueError, match="steps of 5"):
        rollover_label(bad)


def test_effective_threshold_precedence() -> None:
    assert effective_threshold(Settings(), "openai:gpt-4o") == 70
    assert effective_threshold(Settings(), None) == 70
    base = Settings().with_value("threshold.default", 50)
    assert effective_threshold(base, "openai:gpt-4o") == 50
    own = base.with_value("threshold.openai:gpt-4o", 100)
    assert effective_threshold(own, "openai:gpt-4o") == 100
    assert effective_threshold(own, "anthropic:claude") == 50


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("threshold.default", 72, "steps of 5"),
        ("threshold.default", 110, "steps of 5"),
        ("threshold.default", "70", "steps of 5"),
        ("threshold.default", 70.0, "steps of 5"),
        ("threshold.gpt-4o", 70, "threshold.gpt-4o: unknown model"),
        ("threshold.nope:x", 70, "unknown provider"),
        ("experiments.tokenBudget", "yes", "true or false"),
        ("experiments.tokenBudget", 1, "true or false"),
        ("idleCompactionMinutes", 0, "minutes"),
        ("openai-compatible.baseUrl", "localhost:8080", "http"),
        ("colour", "red", "unknown setting 'colour'"),
    ],
)
def test_validation(key: str, value: Any, message: str) -> None:
    with pytest.raises(SettingsError, match=message) as info:
        Settings().with_value(key, value)
    assert info.value.key == key


def test_null_restores_the_default() -> None:
    settings = Settings().with_value("experiments.tokenBudget", True)
    assert settings.token_budget
    cleared = settings.with_value("experiments.tokenBudget", None)
    assert not cleared.token_budget
    assert "experiments.tokenBudget" not in cleared.values
    with pytest.raises(SettingsError, match="unknown setting"):
        Settings().with_value("colour", None)


def test_parse_cli_value() -> None:
    assert parse_cli_value("true") is True
    assert parse_cli_value("70") == 70
    assert parse_cli_value("null") is None
    assert parse_cli_value("http://localhost:8080/v1") == "http://localhost:8080/v1"
    assert parse_cli_value('"70"') == "70"


def test_grouped_and_flat_file_forms_read_alike(tmp_path: Path) -> None:
    grouped = {"experiments": {"tokenBudget": True}, "threshold": {"openai:gpt-4.1": 80}}
    flat = {"experiments.tokenBudget": True, "threshold.openai:gpt-4.1": 80}
    assert from_obj(grouped) == from_obj(flat)
    assert to_obj(from_obj(flat)) == grouped
    with pytest.raises(SettingsError, match="given twice"):
        from_obj({"experiments": {"tokenBudget": True}, "experiments.tokenBudget": False})


def test_unknown_keys_survive_a_rewrite(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"future": {"knob": [1, 2]}, "plain": "x", "empty": {}}))
    update_settings(path, lambda s: s.with_value("approximateCounting", True))
    assert json.loads(path.read_text()) == {
        "approximateCounting": True, "future": {"knob": [1, 2]}, "plain": "x", "empty": {}}


def test_missing_file_means_defaults(tmp_path: Path) -> None:
    settings = load_settings(tmp_path / "absent" / "settings.json")
    assert settings == Settings()
    assert not settings.token_budget
    assert settings.idle_compaction_minutes is None


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"{not json", "is not valid JSON"),
        (b"\xff\xfe", "is not valid JSON"),
        (b"[1, 2]", "must be a JSON object"),
        (b'{"threshold": {"default": 33}}', "threshold.default must be"),
    ],
)
def test_malformed_file_names_the_path(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(content)
    with pytest.raises(SettingsError, match=message) as info:
        load_settings(path)
    assert str(path) in info.value.message
    assert info.value.path == path


def test_atomic_write_leaves_old_file_on_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "settings.json"
    save_settings(path, Settings().with_value("threshold.default", 60))
    before = path.read_bytes()

    def broken_replace(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(FileError, match=f"no space left on device at {path}"):
        save_settings(path, Settings().with_value("threshold.default", 90))
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.json"]  # no temp left


def test_atomic_write_fsyncs_file_and_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[bool] = []
    real_fsync = os.fsync

    def spy(fd: int) -> None:
        synced.append(os.path.isdir(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", spy)
    write_atomic(tmp_path / "f.json", b"{}")
    assert synced == [False, True]  # the file, then its directory
    assert (tmp_path / "f.json").read_bytes() == b"{}"


# -- command line ------------------------------------------------------------------------------


def run(home: Path, *args: str) -> Any:
    return CliRunner().invoke(cli, ["--home", str(home), *args], catch_exceptions=False)


def test_cli_set_and_show(tmp_path: Path) -> None:
    home = tmp_path / "home"
    result = run(home, "settings", "set", "threshold.openai:gpt-4o", "80")
    assert result.exit_code == 0, result.output
    # With the experiment off the threshold triggers the ordinary compaction: say so.
    assert "(compacts by 85%)" in result.output
    assert run(home, "settings", "set", "experiments.tokenBudget", "true").exit_code == 0
    assert run(home, "settings", "set", "openai-compatible.baseUrl",
               "http://localhost:8080/v1").exit_code == 0
    shown = json.loads(run(home, "settings", "show", "--json").output)
    assert shown["path"] == str(home / "settings.json")
    assert shown["settings"]["threshold.openai:gpt-4o"] == 80
    assert shown["settings"]["experiments.tokenBudget"] is True
    assert shown["settings"]["threshold.default"] == 70
    text = run(home, "settings", "show").output
    assert "threshold.default = 70  (rolls over by 75%)  [default]" in text
    on_disk = json.loads((home / "settings.json").read_text())
    assert on_disk["threshold"] == {"openai:gpt-4o": 80}


def test_cli_set_refuses_bad_values_with_exit_2(tmp_path: Path) -> None:
    from tests.front import main

    home = tmp_path / "home"
    assert main(["--home", str(home), "settings", "set", "threshold.default", "72"]) == 2
    assert main(["--home", str(home), "settings", "set", "nonsense", "1"]) == 2
    assert not (home / "settings.json").exists()


def test_cli_show_reports_a_broken_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.front import main

    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.json").write_text("{oops")
    assert main(["--home", str(home), "settings", "show"]) == 2
    assert str(home / "settings.json") in capsys.readouterr().err


def test_concurrent_updates_from_processes_lose_nothing(tmp_path: Path) -> None:
    import subprocess
    import sys

    from tests.conftest import scaled

    path = tmp_path / "settings.json"
    count = scaled(10, 100)
    code = (
        "import sys; from pathlib import Path; from segue._settings import update_settings;"
        "p = Path(sys.argv[1]); tag = sys.argv[2]\n"
        "for i in range(int(sys.argv[3])):\n"
        "    update_settings(p, lambda s: s.with_value(f'threshold.openai:{tag}{i}', 50))\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", code, str(path), tag, str(count)])
             for tag in ("a", "b")]
    assert [p.wait() for p in procs] == [0, 0]
    values = load_settings(path).values
    assert len(values) == 2 * count


def test_the_catalogue_holds_what_each_subsystem_declares() -> None:
    """The providers and the plugins declare their own keys; the settings file knows every one
    of them (defaults, validation) without a copy of its own."""
    from segue import _settings as settings_module
    from segue._providers import keys as provider_keys
    from segue.plugins import _keys as plugin_keys

    declared = {**provider_keys.KEYS, **plugin_keys.KEYS}
    assert {"model", "fallbackModel", "openai-compatible.baseUrl", "plugins"} <= set(declared)
    for key, spec in declared.items():
        assert settings_module.KEYS[key] is spec
    assert set(provider_keys.FAMILIES) <= set(settings_module.MODEL_KEYS)
    assert Settings().get("anthropic.cacheTtl") == "5m"
    with pytest.raises(SettingsError, match="fallbackModel"):
        Settings().with_value("fallbackModel", "nonsense")
    with pytest.raises(SettingsError, match="plugins"):
        from_obj({"plugins": [42]})
