"""The ``plugins`` setting: parsed strictly, turned into lazy plugins by ``open_session``,
imported at the first send of a workspace they apply to and not before (R31)."""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from segue import Layout, SettingsError, load_settings, open_session
from segue._errors import PluginError
from segue._settings import Settings, from_obj
from segue.plugins import PluginSpec, parse_plugins

PLUGIN_SOURCE = '''
from segue.plugins import Append

def setup(plugin):
    plugin.add_adapter(lambda ctx: Append("NOTE FROM " + plugin.name + " in " + ctx.workspace_id))

def sneaky(plugin):
    plugin.add_middleware(lambda request: request)
'''


@pytest.fixture
def plugin_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """An importable plugin module with a unique name, removed from sys.modules after."""
    name = f"segue_test_plugin_{uuid.uuid4().hex[:12]}"
    folder = tmp_path / "site"
    folder.mkdir()
    (folder / f"{name}.py").write_text(PLUGIN_SOURCE)
    monkeypatch.syspath_prepend(str(folder))
    yield name
    sys.modules.pop(name, None)


def configure(tmp_path: Path, plugins: list[Any], workspace: str = "ws") -> Layout:
    layout = Layout(tmp_path / "home", workspace)
    layout.home.mkdir(exist_ok=True)
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            {
                "contextWindow": 8000,
                "encoding": "o200k_base",
                "responses": [{"text": "one"}, {"text": "two"}],
                "requestLog": str(tmp_path / "requests.jsonl"),
            }
        )
    )
    layout.settings.write_text(
        json.dumps({"model": f"scripted:{script}", "plugins": plugins})
    )
    (tmp_path / "work").mkdir(exist_ok=True)
    return layout


def logged_systems(tmp_path: Path) -> list[str]:
    lines = (tmp_path / "requests.jsonl").read_text().splitlines()
    return [json.loads(line)["system"] for line in lines]


def test_parse_entries_strings_and_objects() -> None:
    specs = parse_plugins(
        "plugins",
        [
            "pkg.mod:setup",
            {"entry": "pkg.other:make.setup", "name": "n", "workspace": "w", "sandboxed": True},
        ],
    )
    assert specs == (
        PluginSpec("pkg.mod:setup", "pkg.mod:setup"),
        PluginSpec("n", "pkg.other:make.setup", "w", True),
    )


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("pkg:setup", "must be a list"),
        ([1], "module:function"),
        (["no-colon"], "entry must be"),
        ([{"entry": "a:b", "sandboxed": "yes"}], "sandboxed must be true or false"),
        ([{"entry": "a:b", "workspace": "../x"}], "invalid workspace id"),
        ([{"entry": "a:b", "trusted": True}], "unknown option"),
        (["a:b", {"entry": "c:d", "name": "a:b"}], "given twice"),
    ],
)
def test_malformed_plugin_settings_are_errors(tmp_path: Path, value: Any, message: str) -> None:
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"plugins": value}))
    with pytest.raises(SettingsError, match=message):
        load_settings(settings)


def test_settings_expose_the_specs() -> None:
    assert Settings().plugins == ()
    assert from_obj({"plugins": ["a:b"]}).plugins == (PluginSpec("a:b", "a:b"),)


def test_configured_plugin_is_imported_at_the_first_send_not_before(
    tmp_path: Path, plugin_module: str
) -> None:
    layout = configure(
        tmp_path, [{"entry": f"{plugin_module}:setup", "name": "notes", "sandboxed": True}]
    )
    session = open_session(layout, workdir=tmp_path / "work")
    assert plugin_module not in sys.modules  # building the session imported nothing
    assert session.plugins.pending() == ("notes",)

    assert session.send("hello").status == "completed"

    assert plugin_module in sys.modules
    assert session.plugins.pending() == ()
    (system,) = logged_systems(tmp_path)
    assert system.endswith("NOTE FROM notes in ws")


def test_a_plugin_scoped_to_another_workspace_is_never_imported(
    tmp_path: Path, plugin_module: str
) -> None:
    layout = configure(tmp_path, [{"entry": f"{plugin_module}:setup", "workspace": "other"}])
    session = open_session(layout, workdir=tmp_path / "work")
    assert session.send("hello").status == "completed"
    assert plugin_module not in sys.modules
    assert "NOTE FROM" not in logged_systems(tmp_path)[0]


def test_a_sandboxed_plugin_asking_for_middleware_fails_its_first_send(
    tmp_path: Path, plugin_module: str
) -> None:
    layout = configure(
        tmp_path, [{"entry": f"{plugin_module}:sneaky", "name": "sneaky", "sandboxed": True}]
    )
    session = open_session(layout, workdir=tmp_path / "work")
    with pytest.raises(PluginError, match="sandboxed plugin 'sneaky'"):
        session.send("hello")
    assert list(session.store.rows()) == []  # stopped before anything was written
    assert not (tmp_path / "requests.jsonl").exists()


def test_a_plugin_that_cannot_be_imported_fails_at_first_use(tmp_path: Path) -> None:
    layout = configure(tmp_path, ["segue_no_such_plugin_module:setup"])
    session = open_session(layout, workdir=tmp_path / "work")
    with pytest.raises(PluginError, match="cannot import 'segue_no_such_plugin_module'"):
        session.send("hello")
    assert list(session.store.rows()) == []


def test_a_missing_setup_function_is_named(tmp_path: Path, plugin_module: str) -> None:
    layout = configure(tmp_path, [f"{plugin_module}:nothing_here"])
    session = open_session(layout, workdir=tmp_path / "work")
    with pytest.raises(PluginError, match="has no attribute 'nothing_here'"):
        session.send("hello")
