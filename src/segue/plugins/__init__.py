"""Plugins: request-assembly hooks, their registry and snapshots (SPEC.md R31, R32).

* :mod:`segue.plugins.hooks` — hook kinds, adapter context and results, running a hook list
  (pure values and functions).
* :mod:`segue.plugins.registry` — the registry: plugins, scopes, sandboxing, lazy plugins,
  disposal, mutation epoch, rollover snapshots.
* :mod:`segue.plugins.config` — the ``plugins`` setting parsed into specs (pure).
* :mod:`segue.plugins.loading` — specs turned into lazy plugins (importing happens at first use).
"""

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
