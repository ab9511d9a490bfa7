"""``segue settings show | set``: read and change SEGUE_HOME/settings.json."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

from segue.chat.meter import label as meter_label
from segue.errors import SegueError
from segue.settings import (
    KEYS,
    THRESHOLD_PREFIX,
    Settings,
    load_settings,
    parse_cli_value,
    settings_path,
    update_settings,
)

if TYPE_CHECKING:
    # Imported for types only: cli.main imports this module to register the group.
    from segue.cli.context import CliContext


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
    from segue.providers.model_ref import parse_model
    from segue.providers.registry import known_window

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
    settings = load_settings(path)
    effective = settings.effective()
    if as_json:
        click.echo(json.dumps({"path": str(path), "settings": effective}, ensure_ascii=False))
        return
    click.echo(f"# {path}" + ("" if path.exists() else " (not created yet: all defaults)"))
    for key, value in effective.items():
        source = "" if key in settings.values else "  [default]"
        click.echo(f"{key} = {_render(value)}{_label(key, value, settings)}{source}")


_SET_HELP = (
    "Set KEY to VALUE: JSON where it parses (true, 70), else text; null restores the "
    "default.\n\n\b\nKeys:\n"
    + "".join(f"  {key:<28}{spec.help}\n" for key, spec in KEYS.items())
    + f"  {'threshold.<provider:model>':<28}that model's threshold (%), 0-100 in steps of 5\n"
)


@settings_group.command("set", help=_SET_HELP)
@click.argument("key")
@click.argument("value")
@click.pass_obj
def set_(obj: CliContext, key: str, value: str) -> None:
    parsed = parse_cli_value(value)
    written = update_settings(settings_path(obj.home), lambda s: s.with_value(key, parsed))
    current = written.get(key)
    click.echo(f"{key} = {_render(current)}{_label(key, current, written)}")

