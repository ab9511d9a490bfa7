"""The plugin registry: who registered which hook, lazy loading, disposal, snapshots (R31, R32).

A plugin is a name with two fixed properties: ``sandboxed`` (it may only register
context-only adapters) and an optional ``workspace`` scope (every hook it registers applies to
that workspace only). Plugins register through a :class:`PluginHandle`, either directly (a
library caller: ``registry.plugin("name").add_adapter(fn)``) or lazily: a :class:`LazyPlugin`
is only a name and a loader until the first request assembly or rollover admission of a
workspace it applies to reconciles it (the loader does the I/O, see
:mod:`segue.plugins._loading`; this module never imports plugin code itself).

Invariants:

* ``epoch`` increments on every register, unregister and dispose, so a holder of a snapshot
  can tell whether the registry moved since (:meth:`PluginRegistry.changed_since`).
* A snapshot is immutable: later registrations and unregistrations do not touch it. Disposal
  is the exception and is checked live: a disposed plugin's hooks never run again, from the
  live registry or from any snapshot, and a disposed plugin can neither register nor be
  loaded again.
* A sandboxed plugin registering unrestricted middleware is refused (PluginError); so is a
  workspace-scoped plugin registering for another scope.
* A lazy plugin whose setup fails leaves no registration behind and stays pending: the next
  use tries again and fails as loudly.
* All of it is guarded by one re-entrant lock (a plugin's setup registers from inside a
  reconcile), so concurrent sends in one process see consistent state.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from segue._errors import PluginError, RolloverBlocked
from segue._providers.request import ProviderRequest
from segue.plugins._hooks import (
    Adapter,
    HookKind,
    HookSnapshot,
    Middleware,
    Registration,
    RequestContext,
    applicable,
    run_hooks,
)

Setup = Callable[["PluginHandle"], None]


@dataclass(frozen=True)
class LazyPlugin:
    """A plugin not loaded yet: ``load`` returns its setup function (and is where importing
    happens). ``workspace`` None: it applies to every workspace."""

    name: str
    load: Callable[[], Setup]
    workspace: str | None = None
    sandboxed: bool = False


@dataclass
class _Plugin:
    sandboxed: bool
    workspace: str | None
    disposed: bool = False


class PluginHandle:
    """What one plugin registers through; it carries the plugin's name, sandbox flag and
    scope so a plugin cannot claim more than it was given."""

    def __init__(self, registry: PluginRegistry, name: str) -> None:
        self._registry = registry
        self.name = name

    def add_middleware(self, hook: Middleware, *, workspace: str | None = None) -> Registration:
        """Unrestricted middleware: sees and may change the whole request."""
        return self._registry._register(self.name, HookKind.MIDDLEWARE, hook, workspace)

    def add_adapter(self, hook: Adapter, *, workspace: str | None = None) -> Registration:
        """A context-only adapter: system text and read-only context in, system text out."""
        return self._registry._register(self.name, HookKind.ADAPTER, hook, workspace)

    def unregister(self, registration: Registration) -> None:
        self._registry.unregister(registration)

    def dispose(self) -> None:
        self._registry.dispose(self.name)


@dataclass(eq=False)
class PluginRegistry:
    """Hooks of every known plugin, and the lazy plugins not loaded yet."""

    _plugins: dict[str, _Plugin] = field(default_factory=dict)
    _registrations: dict[int, Registration] = field(default_factory=dict)
    _pending: dict[str, LazyPlugin] = field(default_factory=dict)
    _epoch: int = 0
    _next_order: int = 0
    _lock: threading.RLock = field(default_factory=threading.RLock)

    @classmethod
    def lazy(cls, plugins: Iterable[LazyPlugin]) -> PluginRegistry:
        registry = cls()
        for spec in plugins:
            registry.add_lazy(spec)
        return registry

    # -- plugins -----------------------------------------------------------------------------

    @property
    def epoch(self) -> int:
        return self._epoch

    def changed_since(self, snapshot: HookSnapshot) -> bool:
        return self._epoch != snapshot.epoch

    def plugin(
        self, name: str, *, sandboxed: bool = False, workspace: str | None = None
    ) -> PluginHandle:
        """The handle of plugin ``name``, declaring it on first use. Asking again with other
        properties is a PluginError: a plugin's sandbox flag and scope never change."""
        with self._lock:
            self._declare(name, sandboxed, workspace)
            return PluginHandle(self, name)

    def add_lazy(self, spec: LazyPlugin) -> None:
        with self._lock:
            if spec.name in self._pending or spec.name in self._plugins:
                raise PluginError(f"plugin {spec.name!r} is configured twice", plugin=spec.name)
            self._pending[spec.name] = spec

    def pending(self) -> tuple[str, ...]:
        """Names of the lazy plugins not loaded yet."""
        with self._lock:
            return tuple(self._pending)

    def dispose(self, name: str) -> None:
        """Revoke plugin ``name`` for good: its hooks never run again, also from snapshots
        taken earlier, and it cannot register or load again."""
        with self._lock:
            state = self._plugins.get(name)
            if state is None:
                if name not in self._pending:
                    raise PluginError(f"unknown plugin {name!r}", plugin=name)
                spec = self._pending.pop(name)
                state = self._plugins[name] = _Plugin(spec.sandboxed, spec.workspace)
            state.disposed = True
            for order in [o for o, r in self._registrations.items() if r.plugin == name]:
                del self._registrations[order]
            self._epoch += 1

    def is_live(self, registration: Registration) -> bool:
        """The live revocation check run before each hook (R32)."""
        with self._lock:
            state = self._plugins.get(registration.plugin)
            return state is not None and not state.disposed

    # -- registrations -----------------------------------------------------------------------

    def unregister(self, registration: Registration) -> None:
        with self._lock:
            if self._registrations.pop(registration.order, None) is None:
                raise PluginError(
                    f"{registration.describe()} is not registered", plugin=registration.plugin
                )
            self._epoch += 1

    def registrations(self) -> tuple[Registration, ...]:
        """Every current registration, in order (loaded plugins only)."""
        with self._lock:
            return tuple(sorted(self._registrations.values(), key=lambda r: r.order))

    # -- use -----------------------------------------------------------------------------------

    def reconcile(self, workspace_id: str) -> None:
        """Load every pending plugin that applies to ``workspace_id`` (R31: lazily, at first
        use by that workspace)."""
        with self._lock:
            due = [
                s for s in self._pending.values() if s.workspace in (None, workspace_id)
            ]
            for spec in due:
                self._load(spec)

    def snapshot(self, workspace_id: str) -> HookSnapshot:
        """Reconcile, then the immutable ordered list of applicable registrations (R32)."""
        with self._lock:
            self.reconcile(workspace_id)
            return HookSnapshot(
                workspace_id, self._epoch, applicable(self.registrations(), workspace_id)
            )

    def admit(self, workspace_id: str) -> HookSnapshot:
        """The snapshot a rollover runs, certified: any applicable unrestricted middleware,
        even one that changes nothing, blocks the rollover (RolloverBlocked)."""
        snapshot = self.snapshot(workspace_id)
        certify(snapshot)
        return snapshot

    def apply(
        self,
        request: ProviderRequest,
        context: RequestContext,
        snapshot: HookSnapshot | None = None,
    ) -> ProviderRequest:
        """``request`` through ``snapshot``'s hooks, or (None) the live registry's current
        applicable hooks — lazy plugins of the workspace loaded first."""
        if snapshot is None:
            snapshot = self.snapshot(context.workspace_id)
        return run_hooks(snapshot.registrations, request, context, self.is_live)

    # -- internals -----------------------------------------------------------------------------

    def _declare(self, name: str, sandboxed: bool, workspace: str | None) -> _Plugin:
        if name in self._pending:
            raise PluginError(
                f"plugin {name!r} is configured to load lazily; it registers when loaded",
                plugin=name,
            )
        state = self._plugins.get(name)
        if state is None:
            state = self._plugins[name] = _Plugin(sandboxed, workspace)
        elif (state.sandboxed, state.workspace) != (sandboxed, workspace):
            raise PluginError(
                f"plugin {name!r} was declared with sandboxed={state.sandboxed}, "
                f"workspace={state.workspace!r}; these cannot change",
                plugin=name,
            )
        return state

    def _register(
        self, name: str, kind: HookKind, hook: Middleware | Adapter, workspace: str | None
    ) -> Registration:
        with self._lock:
            state = self._plugins[name]
            if state.disposed:
                raise PluginError(f"plugin {name!r} was disposed", plugin=name)
            if kind is HookKind.MIDDLEWARE and state.sandboxed:
                raise PluginError(
                    f"sandboxed plugin {name!r} may only register context-only adapters, "
                    "not unrestricted middleware",
                    plugin=name,
                )
            if state.workspace is not None:
                if workspace not in (None, state.workspace):
                    raise PluginError(
                        f"plugin {name!r} is scoped to workspace {state.workspace!r} and "
                        f"cannot register for {workspace!r}",
                        plugin=name,
                    )
                workspace = state.workspace
            registration = Registration(
                self._next_order, name, kind, workspace, hook, state.sandboxed
            )
            self._next_order += 1
            self._registrations[registration.order] = registration
            self._epoch += 1
            return registration

    def _load(self, spec: LazyPlugin) -> None:
        del self._pending[spec.name]
        self._plugins[spec.name] = _Plugin(spec.sandboxed, spec.workspace)
        before = set(self._registrations)
        try:
            setup = spec.load()
            if not callable(setup):
                raise PluginError(  # noqa: TRY301 - one cleanup path for every failure
                    f"plugin {spec.name!r}: its entry is {type(setup).__name__}, not a "
                    "setup function",
                    plugin=spec.name,
                )
            setup(PluginHandle(self, spec.name))
        except Exception as exc:  # plugin code may raise anything: cleaned up, re-raised
            for order in set(self._registrations) - before:
                del self._registrations[order]
            del self._plugins[spec.name]
            self._pending[spec.name] = spec
            self._epoch += 1
            if isinstance(exc, PluginError):
                raise
            raise PluginError(
                f"plugin {spec.name!r} failed to load: {type(exc).__name__}: {exc}",
                plugin=spec.name,
            ) from exc


def certify(snapshot: HookSnapshot) -> None:
    """Raise RolloverBlocked when ``snapshot`` holds unrestricted middleware (R32)."""
    blocking = snapshot.unrestricted()
    if blocking:
        names = ", ".join(sorted({r.plugin for r in blocking}))
        raise RolloverBlocked(
            f"the context window is full, but plugin(s) {names} register unrestricted "
            "request middleware, which is not certified for a rollover (only context-only "
            "adapters are); the message was not sent and nothing was changed. Dispose or "
            "sandbox the plugin, run /compact, or /clear --soft"
        )
