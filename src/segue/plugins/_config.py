"""The ``plugins`` setting, parsed into plugin specs (pure: nothing is imported here).

``plugins`` in ``SEGUE_HOME/settings.json`` is a list; each entry names a setup function by
import path, either as a string or as an object with options::

    {"plugins": [
        "acme_segue.audit:setup",
        {"entry": "acme_segue.notes:setup", "name": "notes", "workspace": "demo",
         "sandboxed": true}
    ]}

* ``entry`` — ``module:function``; the function is called once with a
  :class:`~segue.plugins._registry.PluginHandle` when the plugin is first used (R31: lazily).
* ``name`` — defaults to ``entry``; names are unique.
* ``workspace`` — scope every hook of the plugin to that workspace id (default: global).
* ``sandboxed`` — the plugin may only register context-only adapters (default: false).

Configuration is the user's trust decision, so sandboxing and scope live here, not in the
plugin's own code. Installed packages are never loaded just because they are installed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from segue._errors import InvalidWorkspaceId, SettingsError
from segue._workspace import validate_workspace_id

_ENTRY = re.compile(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*")
_KEYS = frozenset({"entry", "name", "workspace", "sandboxed"})


@dataclass(frozen=True)
class PluginSpec:
    name: str
    entry: str
    workspace: str | None = None
    sandboxed: bool = False

    @property
    def module(self) -> str:
        return self.entry.partition(":")[0]

    @property
    def attribute(self) -> str:
        return self.entry.partition(":")[2]


def parse_plugins(key: str, value: Any) -> tuple[PluginSpec, ...]:
    """The specs of a ``plugins`` setting; SettingsError naming ``key`` when malformed."""
    if not isinstance(value, list):
        raise SettingsError(f"{key} must be a list of plugin entries", key=key)
    specs = tuple(_spec(key, i, item) for i, item in enumerate(value))
    seen: set[str] = set()
    for spec in specs:
        if spec.name in seen:
            raise SettingsError(f"{key}: plugin name {spec.name!r} is given twice", key=key)
        seen.add(spec.name)
    return specs


def _spec(key: str, index: int, item: Any) -> PluginSpec:
    where = f"{key}[{index}]"
    if isinstance(item, str):
        item = {"entry": item}
    if not isinstance(item, dict):
        raise SettingsError(f"{where} must be \"module:function\" or an object", key=key)
    unknown = set(item) - _KEYS
    if unknown:
        raise SettingsError(f"{where}: unknown option(s) {sorted(unknown)}", key=key)
    entry = item.get("entry")
    if not isinstance(entry, str) or not _ENTRY.fullmatch(entry):
        raise SettingsError(f"{where}: entry must be \"module:function\", not {entry!r}", key=key)
    name = item.get("name", entry)
    if not isinstance(name, str) or not name:
        raise SettingsError(f"{where}: name must be a non-empty string", key=key)
    workspace = item.get("workspace")
    if workspace is not None:
        try:
            validate_workspace_id(workspace if isinstance(workspace, str) else repr(workspace))
        except InvalidWorkspaceId as exc:
            raise SettingsError(f"{where}: {exc.message}", key=key) from None
    sandboxed = item.get("sandboxed", False)
    if not isinstance(sandboxed, bool):
        raise SettingsError(f"{where}: sandboxed must be true or false", key=key)
    return PluginSpec(name, entry, workspace, sandboxed)
