"""Plugins: request-assembly hooks, their registry and snapshots (SPEC.md R31, R32).

* :mod:`segue.plugins._hooks` — hook kinds, adapter context and results, running a hook list
  (pure values and functions).
* :mod:`segue.plugins._registry` — the registry: plugins, scopes, sandboxing, lazy plugins,
  disposal, mutation epoch, rollover snapshots.
* :mod:`segue.plugins._config` — the ``plugins`` setting parsed into specs (pure).
* :mod:`segue.plugins._loading` — specs turned into lazy plugins (importing happens at first use).
"""

from typing import TYPE_CHECKING

from segue._lazy import listing, load

if TYPE_CHECKING:  # what type checkers see; at run time each name loads on first use
    from segue.plugins._config import PluginSpec, parse_plugins
    from segue.plugins._hooks import (
        AdapterContext,
        Append,
        HookKind,
        HookSnapshot,
        Registration,
        Replace,
        RequestContext,
    )
    from segue.plugins._registry import LazyPlugin, PluginHandle, PluginRegistry, certify

#: Public name → its module (the settings check the ``plugins`` setting with config alone).
_LAZY: dict[str, str] = {
    "PluginSpec": "segue.plugins._config",
    "parse_plugins": "segue.plugins._config",
    "AdapterContext": "segue.plugins._hooks",
    "Append": "segue.plugins._hooks",
    "HookKind": "segue.plugins._hooks",
    "HookSnapshot": "segue.plugins._hooks",
    "Registration": "segue.plugins._hooks",
    "Replace": "segue.plugins._hooks",
    "RequestContext": "segue.plugins._hooks",
    "LazyPlugin": "segue.plugins._registry",
    "PluginHandle": "segue.plugins._registry",
    "PluginRegistry": "segue.plugins._registry",
    "certify": "segue.plugins._registry",
}

__all__ = [
    "AdapterContext",
    "Append",
    "HookKind",
    "HookSnapshot",
    "LazyPlugin",
    "PluginHandle",
    "PluginRegistry",
    "PluginSpec",
    "Registration",
    "Replace",
    "RequestContext",
    "certify",
    "parse_plugins",
]


def __getattr__(name: str) -> object:
    return load(__name__, _LAZY, name)


def __dir__() -> list[str]:
    return listing(globals(), _LAZY)
