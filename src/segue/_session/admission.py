"""Rollover admission (R21): prepare, check, clean up, append, then send the same request.

Order of a rollover, each step a named checkpoint so failures can be injected in tests:

0. plugin hooks (R32): the workspace's lazy plugins are loaded and a certified snapshot of
   the applicable hooks is taken; any applicable unrestricted middleware blocks the rollover
   here (RolloverBlocked), before anything is prepared or cleaned up.
1. ``prepare`` — under the store lock, check that no other send rolled this window over
   (R33: the caller's window lease), build the batch (boundary, lead-in, trigger) and the
   complete candidate request: pinned system text with a *fresh* memory context, the
   advertised tool schemas, and exactly the rows the new window will hold; the snapshot's
   context-only adapters write their system text into it, so it is counted too.
2. ``fit`` — the candidate must fit the hard ceiling, counted with the real encoding. A
   mid-turn batch also carries the turn's request (quoted in the lead-in) and the triggering
   step's calls with their results (:mod:`segue._session.carry`); when that candidate does
   not fit, the copies and then the quote are left out, and the first that fits is sent.
   Failure leaves the current window open and its state untouched.
3. cancellation is checked, then ``cleanup`` clears context-scoped caches and persisted
   carryover (the only cleanup allowed before the append), cancellation is checked again.
4. ``append`` — the batch is appended as one all-or-nothing store batch; the window epoch
   advances and the caller adopts it (R33), and the snapshot is the one the turn runs.
5. the caller sends the very request prepared in step 1, once (no second assembly).

A crash anywhere before step 4 leaves the transcript untouched; after it, the new window is
published with carryover already cleared, so a restart never reopens it with stale state.
The store lock is held from preparation to the append so the boundary's sequence number (and
so the new window's id named in the lead-in) cannot be taken by another writer meanwhile.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Protocol

from segue._context.active import active_rows
from segue._context.budget import Budget
from segue._context.rollover import RolloverReason, rollover_batch
from segue._errors import TurnPaused
from segue._history.protocol import TranscriptStore
from segue._messages import Row
from segue._providers.request import ProviderRequest
from segue._session.cancel import Cancellation as _Cancellation
from segue.plugins._hooks import HookSnapshot

Checkpoint = Callable[[str], None]
#: The turn's cancel flag, with its tasks' flags (:mod:`segue._session.cancel`).
Cancellation = _Cancellation


def no_checkpoint(_phase: str) -> None:
    """Production default: checkpoints are observation points only."""


class RolloverHooks(Protocol):
    """Plugin hooks and the window lease of the turn that rolls over (R32, R33)."""

    def admit(self, reason: RolloverReason) -> HookSnapshot:
        """The certified snapshot to run; raises RolloverBlocked."""

    def decorate(
        self, request: ProviderRequest, snapshot: HookSnapshot, window_id: str
    ) -> ProviderRequest:
        """``request`` through ``snapshot``'s hooks."""

    def check_window(self, where: str) -> None:
        """Raise StaleWindow when another send rolled the window over."""

    def committed(self, snapshot: HookSnapshot) -> None:
        """The batch is durable: adopt the new window epoch and pin ``snapshot``."""


@dataclass(frozen=True)
class Admitted:
    #: The prepared request, hooks applied: sent once, as it is.
    request: ProviderRequest
    stored: list[Row]
    window_id: str
    #: The new window's system text before hooks (what later requests are assembled from).
    system: str
    snapshot: HookSnapshot | None


@dataclass(frozen=True)
class RolloverPlan:
    reason: RolloverReason
    previous_window_id: str
    context_tokens: int
    trigger: Row | None
    ids: tuple[str, str, str]
    rollover_id: str
    now_ms: int
    pending_request: str | None = None
    #: the old window had its notes warning before the rollover (Xum's flushOpportunity)
    flush_opportunity: bool = False
    #: the model asked for this rollover with ``new_context`` (R37: ``requestedBy: "model"``)
    requested_by_model: bool = False
    #: the request that owns an interrupted turn, quoted into the lead-in (:mod:`.carry`)
    request: dict[str, Any] | None = None
    #: copies of the triggering step's calls with their results, after the continuation
    carry: tuple[Row, ...] = ()

    def variants(self) -> list[RolloverPlan]:
        """This plan, then plainer ones: without the step's copies, then without the quote.
        Admission sends the first whose candidate fits (R21)."""
        plans = [self]
        if self.carry:
            plans.append(replace(plans[-1], carry=()))
        if self.request is not None:
            plans.append(replace(plans[-1], request=None))
        return plans


def admit_rollover(
    plan: RolloverPlan,
    *,
    store: TranscriptStore,
    budget: Budget,
    build_system: Callable[[], str],
    tools: tuple[dict[str, object], ...],
    count: Callable[[ProviderRequest], int],
    cleanup: Callable[[], None],
    cancel: Cancellation,
    checkpoint: Checkpoint = no_checkpoint,
    hooks: RolloverHooks | None = None,
) -> Admitted:
    cancel.check("before the rollover")
    # Before the lock: loading a plugin may import code and must not hold the store lock.
    snapshot = hooks.admit(plan.reason) if hooks is not None else None
    with store.locked():
        checkpoint("prepare")
        if hooks is not None:
            hooks.check_window("before the rollover")
        new_window_id = f"w:{store.next_sequence()}"
        system = build_system()
        checkpoint("fit")
        for variant in plan.variants():
            batch = _batch(variant, new_window_id, budget)
            candidate = ProviderRequest(system, tuple(active_rows(batch)), tools)
            if hooks is not None and snapshot is not None:
                candidate = hooks.decorate(candidate, snapshot, new_window_id)
            tokens = count(candidate)
            if budget.fits(tokens):
                break
        else:
            raise TurnPaused(
                f"a fresh context window would not fit the next request ({tokens} tokens > "
                f"{budget.hard_ceiling}); the current window stays open"
            )
        cancel.check("before the rollover cleanup")
        checkpoint("cleanup")
        cleanup()
        cancel.check("before the rollover append")
        checkpoint("append")
        stored = store.append(batch)
        if hooks is not None and snapshot is not None:
            hooks.committed(snapshot)
    return Admitted(candidate, stored, new_window_id, system, snapshot)


def _batch(plan: RolloverPlan, new_window_id: str, budget: Budget) -> list[Row]:
    return [
        *rollover_batch(
            ids=plan.ids,
            rollover_id=plan.rollover_id,
            reason=plan.reason,
            new_window_id=new_window_id,
            previous_window_id=plan.previous_window_id,
            context_tokens=plan.context_tokens,
            max_tokens=budget.limit,
            trigger=plan.trigger,
            now_ms=plan.now_ms,
            pending_request=plan.pending_request,
            flush_opportunity=plan.flush_opportunity,
            requested_by_model=plan.requested_by_model,
            request=plan.request,
        ),
        *plan.carry,
    ]
