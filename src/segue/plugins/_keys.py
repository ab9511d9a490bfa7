"""The ``plugins`` setting, declared here and assembled by :mod:`segue._settings` (light on
purpose: reading a settings file loads this module; the check imports the parser)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from segue._keyspec import KeySpec

if TYPE_CHECKING:
    from segue.plugins._config import PluginSpec


def _plugins(key: str, value: Any) -> list[Any]:
    from segue.plugins._config import parse_plugins

    parse_plugins(key, value)  # SettingsError when malformed; the file keeps the raw list
    return list(value)


def plugin_specs(values: Mapping[str, Any]) -> tuple[PluginSpec, ...]:
    """The plugins the settings name (none when the key is unset)."""
    from segue.plugins._config import parse_plugins

    value = values.get("plugins")
    return parse_plugins("plugins", value) if value is not None else ()


KEYS: dict[str, KeySpec] = {
    "plugins": KeySpec(
        _plugins, None, "plugins to load on first use: [\"module:setup\" | {entry, name, "
        "workspace, sandboxed}]"),
}
