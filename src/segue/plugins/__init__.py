"""Plugins: request-assembly hooks, their registry and snapshots (SPEC.md R31, R32).

* :mod:`segue.plugins.hooks` — hook kinds, adapter context and results, running a hook list
  (pure values and functions).
* :mod:`segue.plugins.registry` — the registry: plugins, scopes, sandboxing, lazy plugins,
  disposal, mutation epoch, rollover snapshots.
* :mod:`segue.plugins.config` — the ``plugins`` setting parsed into specs (pure).
* :mod:`segue.plugins.loading` — specs turned into lazy plugins (importing happens at first use).
"""

from typing import TYPE_CHECKING

from segue._lazy import listing, load

if TYPE_CHECKING:  # what type checkers see; at run time each name loads on first use
    from segue.plugins.config import PluginSpec, parse_plugins
    from segue.plugins.hooks import (
        AdapterContext,
        Append,
        HookKind,
        HookSnapshot,
        Registration,
        Replace,
        RequestContext,
    )
    from segue.plugins.registry import LazyPlugin, PluginHandle, PluginRegistry, certify

#: Public name → its module (the settings check the ``plugins`` setting with config alone).
_LAZY: dict[str, str] = {
    "PluginSpec": "segue.plugins.config",
    "parse_plugins": "segue.plugins.config",
    "AdapterContext": "segue.plugins.hooks",
    "Append": "segue.plugins.hooks",
    "HookKind": "segue.plugins.hooks",
    "HookSnapshot": "segue.plugins.hooks",
    "Registration": "segue.plugins.hooks",
    "Replace": "segue.plugins.hooks",
    "RequestContext": "segue.plugins.hooks",
    "LazyPlugin": "segue.plugins.registry",
    "PluginHandle": "segue.plugins.registry",
    "PluginRegistry": "segue.plugins.registry",
    "certify": "segue.plugins.registry",
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
