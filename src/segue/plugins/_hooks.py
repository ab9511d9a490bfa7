"""Request-assembly hooks as pure values, and how one ordered list of them is run (R31, R32).

Two kinds of hook exist:

* **unrestricted middleware** — ``(ProviderRequest) -> ProviderRequest``: sees and may change
  the whole request (system text, rows, tool schemas). Allowed on ordinary requests and manual
  ``/compact``; never certified for a rollover.
* **context-only adapter** — ``(AdapterContext) -> Append | Replace | None``: receives only the
  system text and read-only facts (workspace id, model, window id), never a row or a tool
  reference, and can only hand system text back. The only kind a sandboxed plugin may
  register and the only kind certified for a rollover.

Invariants:

* Hooks run in registration order (``Registration.order``, assigned by the registry and
  strictly increasing), global and workspace-scoped registrations interleaved by that order.
* A hook's result is checked, never coerced: middleware that returns anything but a
  ``ProviderRequest``, or an adapter that returns anything but ``Append``/``Replace``/``None``,
  is a :class:`~segue._errors.PluginError`.
* Revocation is live: :func:`run_hooks` asks ``is_live`` right before each hook runs, so a
  hook of a plugin disposed after a snapshot was taken never runs again. The adapter's
  context is built afresh for each run (its "sandbox" is re-acquired, never kept).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import Enum

from segue._errors import PluginError
from segue._providers.request import ProviderRequest, SystemText


class HookKind(Enum):
    MIDDLEWARE = "middleware"
    ADAPTER = "adapter"


@dataclass(frozen=True)
class Append:
    """Adapter result: append ``text`` to the system text (after a blank line)."""

    text: str


@dataclass(frozen=True)
class Replace:
    """Adapter result: the system text becomes ``text``."""

    text: str


@dataclass(frozen=True)
class AdapterContext:
    """All a context-only adapter sees: read-only facts and the system text so far."""

    workspace_id: str
    model: str
    window_id: str
    system: str


@dataclass(frozen=True)
class RequestContext:
    """The facts of one request assembly, used to build each adapter's context."""

    workspace_id: str
    model: str
    window_id: str


Middleware = Callable[[ProviderRequest], ProviderRequest]
Adapter = Callable[[AdapterContext], "Append | Replace | None"]


@dataclass(frozen=True)
class Registration:
    """One registered hook. ``workspace`` None means global. ``order`` is its place in the
    registry's total order; it doubles as the handle for unregistering."""

    order: int
    plugin: str
    kind: HookKind
    workspace: str | None
    hook: Middleware | Adapter
    sandboxed: bool

    def applies_to(self, workspace_id: str) -> bool:
        return self.workspace is None or self.workspace == workspace_id

    def describe(self) -> str:
        scope = "global" if self.workspace is None else f"workspace {self.workspace!r}"
        return f"{self.kind.value} #{self.order} of plugin {self.plugin!r} ({scope})"


@dataclass(frozen=True)
class HookSnapshot:
    """An immutable, ordered list of the registrations applicable to one workspace, taken at
    registry mutation epoch ``epoch`` (R32)."""

    workspace_id: str
    epoch: int
    registrations: tuple[Registration, ...]

    def unrestricted(self) -> tuple[Registration, ...]:
        return tuple(r for r in self.registrations if r.kind is HookKind.MIDDLEWARE)


def applicable(
    registrations: tuple[Registration, ...], workspace_id: str
) -> tuple[Registration, ...]:
    """The registrations that apply to ``workspace_id``, in registration order."""
    return tuple(
        sorted((r for r in registrations if r.applies_to(workspace_id)), key=lambda r: r.order)
    )


def run_hooks(
    registrations: tuple[Registration, ...],
    request: ProviderRequest,
    context: RequestContext,
    is_live: Callable[[Registration], bool],
) -> ProviderRequest:
    """``request`` passed through each live registration in order."""
    for registration in registrations:
        if not is_live(registration):
            continue
        if registration.kind is HookKind.MIDDLEWARE:
            request = _run_middleware(registration, request)
        else:
            request = _run_adapter(registration, request, context)
    return request


def _run_middleware(registration: Registration, request: ProviderRequest) -> ProviderRequest:
    result = registration.hook(request)  # type: ignore[arg-type]  # kind tags the signature
    if not isinstance(result, ProviderRequest):
        raise PluginError(
            f"{registration.describe()} returned {type(result).__name__}, "
            "not a ProviderRequest",
            plugin=registration.plugin,
        )
    return result


def _run_adapter(
    registration: Registration, request: ProviderRequest, context: RequestContext
) -> ProviderRequest:
    view = AdapterContext(context.workspace_id, context.model, context.window_id, request.system)
    result = registration.hook(view)  # type: ignore[arg-type]  # kind tags the signature
    if result is None:
        return request
    if isinstance(result, Append):
        return replace(request, system=_appended(request.system, result.text))
    if isinstance(result, Replace):
        return replace(request, system=result.text)
    raise PluginError(
        f"{registration.describe()} returned {type(result).__name__}; a context-only adapter "
        "may only return Append(text), Replace(text) or None",
        plugin=registration.plugin,
    )


def _appended(system: str, text: str) -> str:
    """``text`` after ``system`` (a blank line between). A :class:`SystemText` keeps its
    window-independent head, so the prompt stays a block of its own for the cache."""
    if not system:
        return text
    joined = f"{system}\n\n{text}"
    if isinstance(system, SystemText) and system.stable > 0:
        return SystemText(joined, system.stable)
    return joined
