"""Start-up stays light (issue 13): ``import segue``, ``segue --help`` and a small read load
only what they use. Checked on the modules a real process has loaded, not on a stopwatch."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from segue import HistoryStore, Layout
from segue._cli.lazy import LazyGroup
from segue._cli.main import COMMANDS, cli
from tests.needs import require_module
from tests.test_views import session_rows

SRC = Path(__file__).resolve().parents[2] / "src" / "segue"

#: Never needed to list the commands or to read a transcript.
HEAVY = (
    "segue._providers",
    "segue._session",
    "segue._retrieval",
    "segue._tui",
    "segue._mcp",
    "segue._chat",
    "segue._demo",
    "segue._tokens",
    "segue.plugins",
    "segue._policy",
    "segue._importers",
    "segue.integrations",
    "segue.postgres",
    "tiktoken",
    "textual",
    "httpx",  # what the SDKs loaded before their 2026 releases
    "httpx2",  # what they load now (test_the_heavy_list_names_the_sdks_http_client)
    "openai",
    "anthropic",
    "psycopg",
    "mcp",
    "filelock",
    "sqlite3",
)
#: Not needed by `segue --help` either.
HELP_HEAVY = (*HEAVY, "segue._history", "segue._views", "segue._settings", "msgspec")


def loaded_after(code: str) -> list[str]:
    """The modules loaded by ``code`` (which may print) in a fresh interpreter."""
    probe = f"{code}\nimport sys\nprint('\\n' + __import__('json').dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    modules: list[str] = json.loads(done.stdout.splitlines()[-1])
    return modules


def heavy_in(modules: list[str], heavy: tuple[str, ...]) -> list[str]:
    return [m for m in modules if any(m == h or m.startswith(h + ".") for h in heavy)]


@pytest.mark.parametrize("sdk", ["openai", "anthropic"])
def test_the_heavy_list_names_the_sdks_http_client(sdk: str) -> None:
    """The pins below are only as good as HEAVY: the HTTP client an SDK really loads (the
    installed one, whatever it is called) must be on it."""
    require_module(sdk)
    loaded = {m.split(".")[0] for m in loaded_after(f"import {sdk}")}
    clients = {m for m in loaded if m.startswith("httpx")}
    assert clients, f"{sdk} loads no httpx-like client: which HTTP library does it use now?"
    assert clients <= set(HEAVY)


def test_import_segue_loads_nothing_but_its_version() -> None:
    modules = loaded_after("import segue")
    ours = [m for m in modules if m.startswith("segue")]
    assert ours == ["segue", "segue._lazy", "segue._version"]
    assert heavy_in(modules, (*HELP_HEAVY, "click")) == []


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_lists_every_command_without_importing_them(flag: str) -> None:
    code = f"from segue._cli.entry import main\nassert main([{flag!r}]) == 0"
    modules = loaded_after(code)
    assert heavy_in(modules, HELP_HEAVY) == []
    assert [m for m in modules if m.startswith("segue._cli.")] == [
        "segue._cli.entry",
        "segue._cli.lazy",
        "segue._cli.main",
        "segue._cli.quick_search",
    ]
    out = subprocess.run(
        [sys.executable, "-m", "segue", flag], capture_output=True, text=True, check=True
    ).stdout
    listed = out.split("Commands:\n", 1)[1].split()
    assert set(COMMANDS) <= set(listed)


def test_history_windows_reads_without_providers_or_the_index(segue_home: Path) -> None:
    HistoryStore(Layout(segue_home, "w"), durable=False).append(session_rows())
    (segue_home / "settings.json").write_text('{"model": "openai:gpt-4o", "plugins": []}')
    code = (
        "from segue._cli.entry import main\n"
        f"assert main(['--home', {str(segue_home)!r}, '-w', 'w', 'history', 'windows']) == 0"
    )
    modules = loaded_after(code)
    # what checking those two settings needs: their subsystems' key declarations and parsers
    checked = {
        "segue._providers",
        "segue._providers.keys",
        "segue._providers.model_ref",
        "segue.plugins",
        "segue.plugins._keys",
        "segue.plugins._config",
    }
    assert heavy_in([m for m in modules if m not in checked], HEAVY) == []
    assert "segue._history.store" in modules  # it did read the transcript


def test_the_search_fast_path_loads_neither_click_nor_the_tool(segue_home: Path) -> None:
    from segue._retrieval.index_build import rebuild

    layout = Layout(segue_home, "s")
    HistoryStore(layout, durable=False).append(session_rows())
    rebuild(layout)
    code = (
        "from segue._cli.entry import main\n"
        f"assert main(['--home', {str(segue_home)!r}, '-w', 's', 'history', 'search', 'entry'])"
        " == 0"
    )
    modules = loaded_after(code)
    heavy = (
        *(h for h in HEAVY if h not in ("segue._retrieval", "sqlite3")),
        "click",
        "segue._retrieval.tool",
        "segue._retrieval.pages",
        "segue._retrieval.index_pages",
        "segue._retrieval.index_build",
        "segue._settings",  # there is no settings file
    )
    assert heavy_in(modules, heavy) == []
    assert "segue._retrieval.index_people" in modules  # the index answered


def _groups() -> list[tuple[str, LazyGroup]]:
    history = COMMANDS["history"].load()
    assert isinstance(history, LazyGroup)
    return [("segue", cli), ("segue history", history)]


@pytest.mark.parametrize("where", ["segue", "segue history"])
def test_the_listing_help_is_each_command_s_own(where: str) -> None:
    """The one-line help `--help` shows from the table is what the command itself would
    show, at every width (update the table in segue/_cli/main.py or history.py if not)."""
    group = dict(_groups())[where]
    for name, entry in group.lazy.items():
        command = entry.load()
        assert isinstance(command, click.Command)
        assert command.name == name, f"{where} {name}: the table names {entry.target}"
        for limit in (20, 45, 60, 80, 200):
            assert click.Command(name, help=entry.help).get_short_help_str(limit) == (
                command.get_short_help_str(limit)
            ), f"{where} {name}: the table's help differs from the command's docstring"


def test_help_is_the_same_before_and_after_loading_every_command() -> None:
    runner = CliRunner()
    lazy = runner.invoke(cli, ["--help"], terminal_width=100).output
    history_lazy = runner.invoke(cli, ["history", "--help"], terminal_width=100).output
    for _, group in _groups():
        for name in group.lazy:
            group.get_command(click.Context(group), name)
    assert runner.invoke(cli, ["--help"], terminal_width=100).output == lazy
    assert runner.invoke(cli, ["history", "--help"], terminal_width=100).output == history_lazy


def _type_checking_imports(path: Path) -> dict[str, str]:
    """``name -> module`` of the imports under ``if TYPE_CHECKING:`` in ``path``."""
    found: dict[str, str] = {}
    for node in ast.parse(path.read_text()).body:
        test = node.test if isinstance(node, ast.If) else None
        if isinstance(node, ast.If) and isinstance(test, ast.Name) and test.id == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom) and imp.module
                found.update({alias.name: imp.module for alias in imp.names})
    return found


@pytest.mark.parametrize(
    "package", ["segue", "segue._history", "segue._retrieval", "segue._providers", "segue.plugins"]
)
def test_lazy_tables_agree_with_all_and_what_type_checkers_see(package: str) -> None:
    module = __import__(package, fromlist=["_LAZY"])
    table: dict[str, str] = module._LAZY
    path = SRC.parent / package.replace(".", "/") / "__init__.py"
    assert _type_checking_imports(path) == table
    assert set(table) == set(module.__all__) - {"__version__"}
    assert set(module.__all__) <= set(dir(module))
    for name, where in table.items():
        value = getattr(module, name)
        assert value is getattr(__import__(where, fromlist=[name]), name)
    with pytest.raises(AttributeError):
        getattr(module, "no_such_name")  # noqa: B009 - the lazy look-up is what is tested


def test_without_a_settings_file_the_store_is_the_jsonl_files(tmp_path: Path) -> None:
    """Commands skip reading (and importing) the settings when there is no file: that must
    mean what load_settings would say, store.url's default."""
    from segue import load_settings
    from segue._cli.context import CliContext
    from segue._settings import KEYS

    assert KEYS["store.url"].default is None
    assert load_settings(tmp_path / "settings.json").get("store.url") is None
    assert CliContext(tmp_path, "w").store_url is None
    (tmp_path / "settings.json").write_text('{"store": {"url": "postgresql://h/db"}}')
    assert CliContext(tmp_path, "w").store_url == "postgresql://h/db"
