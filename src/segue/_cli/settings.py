"""``segue settings show | get | set | unset``: read and change SEGUE_HOME/settings.json.

``show`` and ``get`` only read (a missing file is all defaults, and stays missing); ``unset``
of a key that is not set changes nothing and writes nothing.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from segue._chat.meter import label as meter_label
from segue._errors import SegueError
from segue._settings import (
    KEYS,
    MODEL_KEYS,
    THRESHOLD_PREFIX,
    Settings,
    anchor_model_path,
    check_key,
    is_known,
    key_families,
    load_settings,
    parse_cli_value,
    settings_path,
    unknown_note,
    update_settings,
)

if TYPE_CHECKING:
    from click.shell_completion import CompletionItem

    # Imported for types only: cli.main imports this module to register the group.
    from segue._cli.context import CliContext


def _render(value: Any) -> str:
    return "(unset)" if value is None else json.dumps(value, ensure_ascii=False)


def _label(key: str, value: Any, settings: Settings) -> str:
    """What the threshold means with the experiment as set: a rollover or a compaction, at
    the real trigger point for a model whose window is known (its hard ceiling where that
    comes first)."""
    if key.startswith(THRESHOLD_PREFIX) and isinstance(value, int):
        limit = _model_window(key[len(THRESHOLD_PREFIX):], settings)
        return f"  ({meter_label(value, experiment=settings.token_budget, limit=limit)})"
    return ""


def _model_window(model: str, settings: Settings) -> int | None:
    if model == "default":
        return None  # every model without its own threshold: no one window
    from segue._providers.model_ref import parse_model
    from segue._providers.registry import known_window

    try:
        return known_window(parse_model(model), settings)
    except SegueError:
        return None


@click.group("settings")
def settings_group() -> None:
    """Show or change user settings (SEGUE_HOME/settings.json)."""


@settings_group.command("show")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_obj
def show(obj: CliContext, as_json: bool) -> None:
    """Show every setting: its value, or its default when unset."""
    path = settings_path(obj.home)
    settings = load_settings(path, report_unknown=False)  # labelled below instead
    effective = settings.effective()
    if as_json:
        click.echo(json.dumps({"path": str(path), "settings": effective}, ensure_ascii=False))
        return
    click.echo(f"# {path}" + ("" if path.exists() else " (not created yet: all defaults)"))
    for key, value in effective.items():
        source = "" if key in settings.values else "  [default]"
        if not is_known(key):
            source = f"  [ignored: {unknown_note(key)}]"
        click.echo(f"{key} = {_render(value)}{_label(key, value, settings)}{source}")


def _complete_key(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """Shell completion of KEY: the keys, and each per-model family's prefix."""
    from click.shell_completion import CompletionItem

    del ctx, param
    helps = key_families()
    names = [*KEYS, *MODEL_KEYS]
    return [
        CompletionItem(name, help=helps.get(name, helps.get(f"{name}<provider:model>")))
        for name in names
        if name.startswith(incomplete)
    ]


def _plain(value: Any) -> str:
    """A value for scripts: text as it is, anything else as JSON (true, 70, [..], {..})."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


@settings_group.command("get")
@click.argument("key", shell_complete=_complete_key)
@click.pass_obj
def get(obj: CliContext, key: str) -> None:
    """Print KEY's value, or its default when it is not set: text as it is, anything else
    as JSON (true, 70, lists, objects). Exit 1 when KEY is not set and has no default."""
    settings = load_settings(settings_path(obj.home), report_unknown=False)
    if key not in settings.values:
        check_key(key)  # an unknown key is a usage error (exit 2) naming the known ones
    value = settings.get(key)
    if value is None:
        fallback = ""
        if key.startswith(THRESHOLD_PREFIX):
            fallback = f"; threshold.default applies ({settings.get('threshold.default')})"
        click.echo(f"segue: {key} is not set and has no default{fallback}", err=True)
        raise SystemExit(1)
    click.echo(_plain(value))


_SET_HELP = (
    "Set KEY to VALUE: JSON where it parses (true, 70, -5), else text; null restores the "
    "default (as `segue settings unset KEY` does). A scripted:PATH model is stored with PATH "
    "made absolute.\n\n\b\nKeys:\n"
    + "".join(
        textwrap.fill(text, 76, initial_indent=f"  {key:<32}", subsequent_indent=" " * 34)
        + "\n"
        for key, text in key_families().items()
    )
)


@settings_group.command(
    "set",
    help=_SET_HELP,
    # VALUE may start with a dash (-5): only -h/--help is an option here.
    context_settings={"ignore_unknown_options": True},
)
@click.argument("key", shell_complete=_complete_key)
@click.argument("value")
@click.pass_obj
def set_(obj: CliContext, key: str, value: str) -> None:
    check_key(key)  # before anything is written (the lock file included)
    parsed = anchor_model_path(key, parse_cli_value(value), Path.cwd())
    written = update_settings(settings_path(obj.home), lambda s: s.with_value(key, parsed))
    current = written.get(key)
    click.echo(f"{key} = {_render(current)}{_label(key, current, written)}")


@settings_group.command("unset")
@click.argument("key", shell_complete=_complete_key)
@click.pass_obj
def unset(obj: CliContext, key: str) -> None:
    """Remove KEY from settings.json so that its default applies again. A key that is not
    set is left alone (nothing is written)."""
    path = settings_path(obj.home)
    present = key in load_settings(path, report_unknown=False).values
    if not is_known(key):
        if not present:
            check_key(key)  # the usage error set and get give, naming the known keys
        # A key segue does not know, in the file (a typo made by hand): removing it is the fix.
        update_settings(path, lambda s: s.with_value(key, None))
        click.echo(f"{unknown_note(key)}; removed it from {path}")
        return
    if not present:
        click.echo(f"{key} was not set; nothing changed")
        return
    written = update_settings(path, lambda s: s.with_value(key, None))
    default = written.get(key)
    if default is None:
        click.echo(f"{key} unset (it has no default)")
    else:
        click.echo(f"{key} unset; default: {_render(default)}{_label(key, default, written)}")
