"""Turning configured plugin specs into lazy plugins: the I/O side of the registry.

Nothing is imported when a registry is built: each :class:`LazyPlugin`'s loader imports the
module and looks the setup function up only when the registry reconciles it (the first
request assembly or rollover admission of a workspace it applies to). An import failure or a
missing attribute is a PluginError naming the plugin, raised at that first use.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from typing import cast

from segue._errors import PluginError
from segue.plugins._config import PluginSpec
from segue.plugins._registry import LazyPlugin, PluginRegistry, Setup


def lazy_plugin(spec: PluginSpec) -> LazyPlugin:
    return LazyPlugin(spec.name, _loader(spec), spec.workspace, spec.sandboxed)


def registry_from_specs(specs: Iterable[PluginSpec]) -> PluginRegistry:
    return PluginRegistry.lazy(lazy_plugin(s) for s in specs)


def _loader(spec: PluginSpec) -> Callable[[], Setup]:
    def load() -> Setup:
        try:
            target: object = importlib.import_module(spec.module)
        except ImportError as exc:
            raise PluginError(
                f"plugin {spec.name!r}: cannot import {spec.module!r}: {exc}", plugin=spec.name
            ) from exc
        for part in spec.attribute.split("."):
            if not hasattr(target, part):
                raise PluginError(
                    f"plugin {spec.name!r}: {spec.entry!r} has no attribute {part!r}",
                    plugin=spec.name,
                )
            target = getattr(target, part)
        if not callable(target):
            raise PluginError(
                f"plugin {spec.name!r}: {spec.entry!r} is not callable", plugin=spec.name
            )
        # Its signature is the plugin's promise; a wrong one fails loudly when setup is called.
        return cast(Setup, target)

    return load
