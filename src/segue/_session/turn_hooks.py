"""What one turn runs its provider requests through: plugin hooks and its window lease
(SPEC.md R31-R33).

* Until a rollover of this turn commits, each request assembly passes through the **live**
  registry: the workspace's lazy plugins are loaded on first use, then the registrations
  that apply now run in order (unrestricted middleware allowed — ordinary requests keep live
  middleware filtering).
* A rollover admission takes a certified snapshot (:meth:`PluginRegistry.admit`; any
  applicable unrestricted middleware blocks it before cleanup). Once its batch commits, that
  snapshot is *pinned*: the prepared request and every later request of the turn run it, so
  registry changes after admission reach later admissions only. The context-exceeded
  backstop is an in-process retry of the turn's request and reuses the pinned snapshot; any
  other rollover of the same turn is a new admission and takes a new one.
* Disposal stays live in both cases (checked before each hook run by the registry).
* The lease (:mod:`segue._session.epochs`) is checked before a rollover prepares anything and
  before every provider call; the turn adopts the new epoch when its own rollover commits.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from segue._context.rollover import RolloverReason
from segue._providers.request import ProviderRequest
from segue._session.epochs import WindowLease
from segue._workspace import Layout
from segue.plugins._hooks import HookSnapshot, RequestContext
from segue.plugins._registry import PluginRegistry

if TYPE_CHECKING:
    from segue._session.core import Session


class TurnHooks:
    """The hooks and lease of one turn; implements admission's ``RolloverHooks``."""

    def __init__(
        self, registry: PluginRegistry, layout: Layout, model: str, lease: WindowLease
    ) -> None:
        self.registry = registry
        self.workspace_id = layout.workspace_id
        self.model = model
        self.lease = lease
        #: The certified snapshot of this turn's committed rollover, once there is one.
        self.pinned: HookSnapshot | None = None
        # A turn is a use of the workspace: its lazy plugins load now, so a plugin that fails
        # to load stops the send before anything is written.
        registry.reconcile(self.workspace_id)

    @classmethod
    def start(cls, session: Session) -> TurnHooks:
        """The hooks of a turn (or a /compact) of ``session`` starting now."""
        lease = session.epochs.lease(session.layout)
        return cls(session.plugins, session.layout, session.provider.model, lease)

    def context(self, window_id: str) -> RequestContext:
        return RequestContext(self.workspace_id, self.model, window_id)

    def apply(self, request: ProviderRequest, window_id: str) -> ProviderRequest:
        """A request assembled in window ``window_id``, through the turn's hooks."""
        return self.registry.apply(request, self.context(window_id), self.pinned)

    # -- admission's RolloverHooks --------------------------------------------------------------

    def admit(self, reason: RolloverReason) -> HookSnapshot:
        if reason == "context-exceeded" and self.pinned is not None:
            return self.pinned
        return self.registry.admit(self.workspace_id)

    def decorate(
        self, request: ProviderRequest, snapshot: HookSnapshot, window_id: str
    ) -> ProviderRequest:
        return self.registry.apply(request, self.context(window_id), snapshot)

    def check_window(self, where: str) -> None:
        self.lease.check(where)

    def committed(self, snapshot: HookSnapshot) -> None:
        self.lease.advance()
        self.pinned = snapshot
