"""The window rules every turn driver applies, in one place: segue's own turn loop
(:class:`~segue.session.turn.Turn`, behind ``Session`` and ``segue run``) and the framework
edges (:class:`~segue.integrations.engine.WindowEngine`) both call these, so the two cannot
drift apart on the rollover rules.

* :meth:`WindowRules.rejection` — R16: a message that cannot fit even a fresh window is
  refused before any model call, and kept transcript-only (R22);
* :meth:`WindowRules.decide` — R3, R13, R14: the budget decision at a send or a settled step,
  from the projected size of the next request; ``at_send`` and ``after_step`` act on it at
  those two moments (roll over, or stop the turn) and hand the rest to the driver;
* :meth:`WindowRules.roll_over` — R5, R6, R21, R37: the rollover plan (ids, the request that
  owns an interrupted turn, the triggering step's copies, :mod:`segue.session.carry`) through
  admission;
* :func:`new_context_answer` — R37: the answer to a ``new_context`` call whose rollover was
  made (or had nothing to seal);
* :func:`decision_reason` — the reason a paused turn gives.

What differs between the drivers is passed in, not branched on: the system text builder, the
cleanup admission may run, plugin hooks and the window lease (segue's own turns only).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from segue.context.active import has_sealable_context
from segue.context.assembly import current_window_id
from segue.context.boundaries import item_id
from segue.context.budget import Action, Budget, Decision, Situation, decide
from segue.context.rollover import RolloverReason, quarantined
from segue.errors import TurnPaused
from segue.history.protocol import TranscriptStore
from segue.messages import Row
from segue.providers.request import ProviderRequest
from segue.session.admission import (
    Admitted,
    Cancellation,
    Checkpoint,
    RolloverHooks,
    RolloverPlan,
    admit_rollover,
    no_checkpoint,
)
from segue.session.carry import owning_request, tail_copies

T = TypeVar("T")

#: The lead-in a fresh window starts with, counted generously for the R16 preflight.
LEAD_IN_ALLOWANCE = 256


@dataclass(frozen=True)
class Pressure:
    """What a budget decision needs besides the projected size and the window itself."""

    experiment: bool
    may_use_history: bool
    #: the window already had its notes warning (R14), or the driver never warns
    warned: bool
    notes_writable: bool


#: A driver's rollover: (reason, trigger, the settled step to carry) → what it goes on with.
Roll = Callable[[RolloverReason, Row | None, Sequence[Row]], T]


@dataclass
class WindowRules:
    """One workspace's window rules over its store, budget and counter."""

    store: TranscriptStore
    budget: Budget
    #: the request's size with the model's real encoding (R17)
    count: Callable[[ProviderRequest], int]
    new_id: Callable[[str], str]
    clock: Callable[[], int]
    cancel: Cancellation
    checkpoint: Checkpoint = no_checkpoint

    # -- R16 -------------------------------------------------------------------------------------

    def rejection(
        self,
        message: Row,
        system: str,
        tools: tuple[dict[str, object], ...],
        *,
        stored: bool,
    ) -> str | None:
        """None when ``message`` fits a fresh window; else it is quarantined (in place when
        ``stored``, else appended so) and the reason is returned."""
        fresh = self.count(ProviderRequest(system, (message,), tools)) + LEAD_IN_ALLOWANCE
        if self.budget.fits(fresh):
            return None
        if stored:
            self.store.quarantine(item_id(message))
        else:
            self.store.append([quarantined(message)])
        return (
            f"the message does not fit even a fresh context window ({fresh} tokens > "
            f"{self.budget.hard_ceiling} of {self.budget.limit}); it was kept in the "
            "transcript but will not be sent"
        )

    # -- R3, R13, R14 ----------------------------------------------------------------------------

    def decide(self, projected: int, window: Sequence[Row], pressure: Pressure) -> Decision:
        return decide(
            self.budget,
            Situation(
                projected=projected,
                experiment=pressure.experiment,
                may_use_history=pressure.may_use_history,
                window_has_context=has_sealable_context(window),
                warned=pressure.warned,
                notes_writable=pressure.notes_writable,
            ),
        )

    def at_send(
        self,
        window: Sequence[Row],
        message: Row,
        projected: int,
        *,
        pressure: Pressure,
        roll: Roll[T],
    ) -> T | Decision:
        """The budget check when a human message arrives (R3, R5, R13): a full window rolls
        over with the message as its trigger (``roll``'s result is returned); a block or
        pause stops the turn before the message is stored; any other decision is the
        driver's to act on (append the message, compact)."""
        decision = self.decide(projected, window, pressure)
        if decision.action is Action.ROLLOVER:
            return roll("on-send", message, ())
        if decision.action in (Action.BLOCK, Action.PAUSE):
            raise TurnPaused(decision_reason(decision) + " (the message was not sent)")
        return decision

    def after_step(
        self,
        window: Sequence[Row],
        projected: int,
        *,
        pressure: Pressure,
        step: Sequence[Row],
        roll: Roll[T],
    ) -> T | Decision:
        """The budget check after a settled tool step (R3, R6, R18): a full window rolls
        over mid-stream, carrying ``step`` (the rows the step stored); a block or pause
        stops the turn (the step's results are already durable, nothing else is written);
        any other decision (go on, warn, compact) is the driver's."""
        decision = self.decide(projected, window, pressure)
        if decision.action is Action.ROLLOVER:
            return roll("mid-stream", None, step)
        if decision.action in (Action.BLOCK, Action.PAUSE):
            raise TurnPaused(decision_reason(decision))
        return decision

    # -- R5, R6, R21, R37 ------------------------------------------------------------------------

    def roll_over(
        self,
        reason: RolloverReason,
        window: Sequence[Row],
        context_tokens: int,
        trigger: Row | None,
        *,
        build_system: Callable[[], str],
        tools: tuple[dict[str, object], ...],
        cleanup: Callable[[], None] = lambda: None,
        hooks: RolloverHooks | None = None,
        pending_request: str | None = None,
        requested_by_model: bool = False,
        flush_opportunity: bool = False,
        step: Sequence[Row] = (),
        boundary_id: str | None = None,
    ) -> Admitted:
        """Roll ``window`` over through admission. A turn it interrupts (no human trigger,
        nothing pending) has its request quoted into the lead-in and ``step``'s calls with
        their results carried into the new window, when they fit. ``boundary_id``: the new
        boundary's row id, when the caller needs it before (a carryover handoff names it)."""
        interrupted = trigger is None and pending_request is None
        boundary = boundary_id if boundary_id is not None else self.new_id("rollover")
        plan = RolloverPlan(
            reason=reason,
            previous_window_id=current_window_id(list(window)),
            context_tokens=context_tokens,
            trigger=trigger,
            ids=(boundary, self.new_id("lead-in"), self.new_id("continue")),
            rollover_id=self.new_id("r"),
            now_ms=self.clock(),
            pending_request=pending_request,
            flush_opportunity=flush_opportunity,
            requested_by_model=requested_by_model,
            request=owning_request(window) if interrupted else None,
            carry=tuple(tail_copies(step, self.new_id)) if trigger is None else (),
        )
        return admit_rollover(
            plan,
            store=self.store,
            budget=self.budget,
            build_system=build_system,
            tools=tools,
            count=self.count,
            cleanup=cleanup,
            cancel=self.cancel,
            checkpoint=self.checkpoint,
            hooks=hooks,
        )


def new_context_answer(window_id: str) -> dict[str, Any]:
    """R37's answer once the model's rollover happened (or there was nothing to seal)."""
    return {"ok": True, "windowId": window_id}


def decision_reason(decision: Decision) -> str:
    return decision.reason or f"context budget: {decision.action.value}"
