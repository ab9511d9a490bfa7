"""The window rules every turn driver applies, in one place: segue's own turn loop
(:class:`~segue._session.turn.Turn`, behind ``Session`` and ``segue run``) and the framework
edges (:class:`~segue.integrations._engine.WindowEngine`) both call these, so the two cannot
drift apart on the rollover rules.

* :meth:`WindowRules.rejection` — R16: a message that cannot fit even a fresh window is
  refused before any model call, and kept transcript-only (R22);
* :meth:`WindowRules.decide` — R3, R13, R14: the budget decision at a send or a settled step,
  from the projected size of the next request; ``at_send`` and ``after_step`` act on every
  decision at those two moments (roll over, stop the turn, compact, write R14's warning,
  store the message) through the driver's :class:`Moves`;
* :func:`new_context_request` and :meth:`WindowRules.model_rollover` — R37: whether a
  ``new_context`` call may be carried out, and the rollover that answers it;
* :func:`awaiting_reply` — the window ends on a human message the model has not answered;
* :meth:`WindowRules.roll_over` — R5, R6, R21, R37: the rollover plan (ids, the request that
  owns an interrupted turn, the triggering step's copies, :mod:`segue._session.carry`) through
  admission;
* :func:`new_context_answer` — R37: the answer to a ``new_context`` call whose rollover was
  made (or had nothing to seal);
* :func:`decision_reason` — the reason a paused turn gives.

What differs between the drivers is passed in, not branched on: how the driver goes on after
a moment (its request, or the rows a framework shows its model), the system text builder,
the cleanup admission may run, compaction, plugin hooks and the window lease (segue's own
turns only). The drivers keep only what the other cannot have: segue's turn runs the
provider steps and the tools (with the overflow backstop, R17, and interrupts, R40); a
framework edge runs neither and only calls these moments.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from segue._context.active import active_rows, has_sealable_context
from segue._context.assembly import current_window_id, last_step_usage
from segue._context.boundaries import item_id
from segue._context.budget import Action, Budget, Decision, Situation, decide, rollover_label
from segue._context.rollover import (
    RolloverReason,
    compaction_continuation_row,
    quarantined,
    warning_row,
)
from segue._errors import ContextSignal, TurnPaused
from segue._history.protocol import TranscriptStore
from segue._messages import Row
from segue._providers.request import ProviderRequest
from segue._session.admission import (
    Admitted,
    Cancellation,
    Checkpoint,
    RolloverHooks,
    RolloverPlan,
    admit_rollover,
    no_checkpoint,
)
from segue._session.carry import carries_results, owning_request, tail_copies
from segue._session.window import load_window
from segue._tools.base import tool_error
from segue._tools.new_context import not_allowed, reason_of

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
    #: the warning also offers ``new_context`` (R37)
    offer_new_context: bool = False


#: A driver's rollover: (reason, trigger, the settled step to carry) → what it goes on with.
Roll = Callable[[RolloverReason, Row | None, Sequence[Row]], T]


def _cannot_compact() -> None:
    raise TurnPaused("the context window is full and this edge cannot compact it")


@dataclass(frozen=True)
class Moves(Generic[T]):
    """What one driver does at a moment that the rules cannot do for it."""

    #: a rollover through :meth:`WindowRules.roll_over` with the driver's system text and hooks
    roll: Roll[T]
    #: go on with ``window`` (as stored now); ``added``: the rows the moment appended (the
    #: message, a warning, a continuation); ``reopened``: a compaction opened a new window
    go_on: Callable[[list[Row], list[Row], bool], T]
    #: summarize the window (R4); raises TurnPaused when no summary came. A framework edge
    #: runs with the experiment on (R1), where the decision never compacts.
    compact: Callable[[], None] = _cannot_compact


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

    def projected_at_send(
        self,
        window: Sequence[Row],
        message: Row,
        system: str,
        tools: tuple[dict[str, object], ...],
    ) -> int:
        """R3 at a send: the request the message makes, or the provider's own count of the
        window's last step plus the message, whichever is larger (the persisted usage is
        what a restarted process, or another driver on the same workspace, reads, R7)."""
        assembled = self.count(ProviderRequest(system, (*active_rows(window), message), tools))
        alone = self.count(ProviderRequest("", (message,), ()))
        return max(assembled, last_step_usage(window) + alone)

    def at_send(
        self,
        window: Sequence[Row],
        message: Row,
        projected: int,
        *,
        pressure: Pressure,
        moves: Moves[T],
    ) -> T:
        """The budget check when a human message arrives (R3, R5, R13): a full window rolls
        over with the message as its trigger; a block or pause stops the turn before the
        message is stored; else the window is compacted first where the decision says so,
        and the message is stored (R14's warning waits for a settled tool step)."""
        decision = self.decide(projected, window, pressure)
        if decision.action is Action.ROLLOVER:
            return moves.roll("on-send", message, ())
        if decision.action in (Action.BLOCK, Action.PAUSE):
            raise TurnPaused(decision_reason(decision) + " (the message was not sent)")
        reopened = decision.action is Action.COMPACT
        if reopened:
            moves.compact()
            window = load_window(self.store)  # the compaction opened a new window
        added = self.store.append([message])
        return moves.go_on([*window, *added], added, reopened)

    def after_step(
        self,
        window: Sequence[Row],
        projected: int,
        *,
        pressure: Pressure,
        step: Sequence[Row],
        moves: Moves[T],
    ) -> T:
        """The budget check after a settled tool step (R3, R6, R14, R18): a full window rolls
        over mid-stream, carrying ``step`` (the rows the step stored); a block or pause
        stops the turn (the step's results are already durable, nothing else is written); a
        window nearing the threshold gets its once-per-window warning; a compaction is
        followed by a user-side continuation, so the request never ends on an assistant row
        (which a provider would take as a prefill)."""
        decision = self.decide(projected, window, pressure)
        if decision.action is Action.ROLLOVER:
            return moves.roll("mid-stream", None, step)
        if decision.action in (Action.BLOCK, Action.PAUSE):
            raise TurnPaused(decision_reason(decision))
        if decision.action is Action.WARN:
            added = self.store.append([self._warning(projected, pressure)])
            return moves.go_on([*window, *added], added, False)
        if decision.action is Action.COMPACT:
            moves.compact()
            added = self.store.append(
                [compaction_continuation_row(row_id=self.new_id("continue"), now_ms=self.clock())]
            )
            return moves.go_on(load_window(self.store), added, True)
        return moves.go_on(list(window), [], False)

    def _warning(self, projected: int, pressure: Pressure) -> Row:
        """R14's row: ask for notes before the window fills (and offer R37's new_context)."""
        budget = self.budget
        return warning_row(
            row_id=self.new_id("warning"),
            now_ms=self.clock(),
            percent=budget.percent(projected),
            label=rollover_label(budget.threshold),
            context_tokens=projected,
            max_tokens=budget.limit,
            budget_tokens=budget.trigger_tokens or budget.hard_ceiling,
            offer_new_context=pressure.offer_new_context,
        )

    def at_overflow(
        self,
        window: Sequence[Row],
        *,
        pressure: Pressure,
        used: bool,
        why: str,
        pending: str,
    ) -> tuple[str | None, Sequence[Row]]:
        """The provider said the request does not fit: the handled backstop (R17), once a
        turn (``used``), with automatic handling on and something a fresh window would not
        hold anyway. Returns what the ``context-exceeded`` rollover carries: the request
        quoted when the window ends on it unanswered (``pending``), else the settled step.
        Otherwise the turn stops with ``why``."""
        if (
            not (pressure.experiment and self.budget.automatic)
            or used
            or not pressure.may_use_history
            or not has_sealable_context(window)
            # Only the lead-in and the message itself: a fresh window would hold the same.
            or not any(r.role == "assistant" for r in active_rows(window))
        ):
            raise TurnPaused(f"the provider rejected the request as too large: {why}")
        last = window[-1]
        return (
            pending if awaiting_reply(last) else None,
            window[-1:] if carries_results(last) else [],
        )

    def model_rollover(self, window: Sequence[Row], roll: Callable[[], str]) -> dict[str, Any]:
        """R37: the model called new_context. The window is sealed at the last settled step,
        exactly as R5 rolls over (``on-send``, ``requestedBy: "model"``: ``roll`` makes it and
        returns the new window's id), and the call is answered with the new window's id.
        A window with nothing to seal is answered with its own id. A refusal (the fresh
        window would not fit, a plugin blocks it) or a stop (a cancel, another send rolled
        the window over) → ``not_allowed``, nothing rolled over."""
        try:
            if not has_sealable_context(window):
                return new_context_answer(current_window_id(list(window)))
            return new_context_answer(roll())
        except ContextSignal as exc:
            return not_allowed(exc.message)

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


def new_context_request(
    args: object,
    *,
    may_use_history: bool,
    who: str,
    experiment: bool = True,
    allowed: bool = True,
) -> str | dict[str, Any]:
    """A new_context call checked under tool policy, R12 and R13 (R37): its reason, or the
    answer it gets instead. ``who`` names the agent in the refusal."""
    if not experiment:
        return not_allowed("new_context is offered only with experiments.tokenBudget on")
    if not allowed:
        return not_allowed(f"{who} may not use new_context")
    if not may_use_history:
        return not_allowed(
            f"{who} may not use session_history, so a fresh window would lose access to "
            "earlier work (R13)"
        )
    if not isinstance(args, Mapping):
        return tool_error("invalid_argument", "tool input must be a JSON object")
    return reason_of(args)


def idle_compaction_due(window: Sequence[Row], now_ms: int, minutes: int | None) -> bool:
    """The window has sat idle ``minutes`` since its newest stamped row and holds something
    to summarize: a send compacts it first (opportunistically; ``None``: never)."""
    if minutes is None:
        return False
    last = next((r.timestamp for r in reversed(window) if r.timestamp is not None), None)
    return last is not None and now_ms - last >= minutes * 60_000 and has_sealable_context(window)


def awaiting_reply(row: Row | None) -> bool:
    """``row`` is a human message the model has not answered yet (the window ends on it)."""
    return row is not None and row.role == "user" and not row.flag("synthetic")


def new_context_answer(window_id: str) -> dict[str, Any]:
    """R37's answer once the model's rollover happened (or there was nothing to seal)."""
    return {"ok": True, "windowId": window_id}


def decision_reason(decision: Decision) -> str:
    return decision.reason or f"context budget: {decision.action.value}"
