"""The turn loop: send → preflight → (rollover admission) → provider step → tools → settled
step → budget check → … until the model answers (SPEC.md R1-R7, R13, R14, R16-R18, R21, R22).

Data flows one way: this module asks the pure modules (``context``, ``policy``, ``tokens``)
what to do and does I/O only through the store, the provider, the tools and memory.

Invariants:

* Every row reaches the transcript through one store batch; an assistant step (its text and
  all its tool calls with their results) is one row, so a tool call and its result are never
  split, and a step is "settled" exactly when that row is durable.
* Budget decisions are taken at a send and after each settled tool step, from the projected
  size of the next request. A restarted process derives pressure from the persisted history
  and never resurrects queued work (R7): nothing is queued outside the transcript.
* Nothing is sent that was not counted with the model's real encoding first (R17).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from xum.context.active import active_rows, has_sealable_context
from xum.context.assembly import current_window_id, last_step_usage, system_text, warned_in_window
from xum.context.budget import Action, Budget, Decision, Situation, decide, rollover_label
from xum.context.rollover import RolloverReason, manual_reset_row, quarantined, warning_row
from xum.errors import (
    CompactionFailed,
    ContextOverflowError,
    ContextSignal,
    ProviderError,
    TurnCancelled,
    TurnPaused,
)
from xum.events import (
    AssistantText,
    Compacted,
    EventSink,
    Notice,
    RolledOver,
    StepUsage,
    ToolFinished,
    ToolStarted,
    Warned,
    ignore,
)
from xum.history.protocol import TranscriptStore
from xum.memory.hot import select_memory
from xum.memory.store import load_memories
from xum.messages import Part, Row, encode_obj, make_row
from xum.plugins import PluginRegistry
from xum.policy import SESSION_HISTORY_TOOL, Agent, RuleSet, may_use
from xum.providers.base import Provider, StreamEvent
from xum.providers.base import TextDelta as ProviderTextDelta
from xum.providers.request import ProviderRequest, ToolCall
from xum.session.admission import (
    Cancellation,
    Checkpoint,
    RolloverPlan,
    admit_rollover,
    no_checkpoint,
)
from xum.session.compaction import compaction_request, compaction_row, summary_from
from xum.session.epochs import WINDOW_EPOCHS, WindowEpochs
from xum.session.turn_hooks import TurnHooks
from xum.session.window import load_window
from xum.tokens import calibration_file, count_request, count_text
from xum.tokens.registry import TokenModel, resolve
from xum.tools.base import ToolRegistry, tool_error
from xum.tools.carryover import FileState, with_carryover
from xum.tools.carryover_file import CarryoverFile, Handoff
from xum.workspace import Layout

Status = Literal["completed", "paused", "rejected", "error"]
DEFAULT_MAX_STEPS = 64


@dataclass(frozen=True)
class TurnResult:
    status: Status
    reason: str | None
    window_id: str
    rollovers: int
    text: str = ""

    def to_json(self) -> dict[str, Any]:
        """The closing object of ``xum run --json`` (SPEC.md §5)."""
        return {
            "status": self.status,
            "reason": self.reason,
            "windowId": self.window_id,
            "rollovers": self.rollovers,
        }


@dataclass(frozen=True)
class SessionConfig:
    experiment: bool = False
    threshold: int = 70
    idle_compaction_minutes: int | None = None
    max_steps: int = DEFAULT_MAX_STEPS


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _new_id(kind: str) -> str:
    return f"{kind}-{uuid.uuid4().hex[:16]}"


class Session:
    """One workspace's conversation with one provider and one agent."""

    def __init__(
        self,
        layout: Layout,
        store: TranscriptStore,
        provider: Provider,
        *,
        agent: Agent,
        tools: ToolRegistry,
        config: SessionConfig,
        restrictions: tuple[RuleSet, ...] = (),
        on_event: EventSink = ignore,
        clock: Callable[[], int] = _now_ms,
        new_id: Callable[[str], str] = _new_id,
        checkpoint: Checkpoint = no_checkpoint,
        plugins: PluginRegistry | None = None,
        epochs: WindowEpochs = WINDOW_EPOCHS,
    ) -> None:
        self.layout = layout
        self.plugins = plugins if plugins is not None else PluginRegistry()  # R31, R32
        self.epochs = epochs  # R33: shared by every send of the workspace in this process
        self.store = store
        self.provider = provider
        self.agent = agent
        self.tools = tools
        self.config = config
        self.policy = agent.policy(*restrictions)
        self.budget = Budget(provider.context_window, config.threshold)
        self.on_event = on_event
        self.clock = clock
        self.new_id = new_id
        self.checkpoint = checkpoint
        self.cancellation = Cancellation()
        self._token_model = self._resolve_token_model(provider)
        #: Context-scoped state (R21: the only thing cleared before a rollover's append).
        self._context_cache: dict[str, Any] = {}
        #: The edited-file carryover (R4, R10, R21), shared through its file with the tools.
        self.carryover = CarryoverFile(layout, store)

    # -- policy and counting ---------------------------------------------------------------------

    @staticmethod
    def _resolve_token_model(provider: Provider) -> TokenModel:
        if provider.model.startswith("scripted:"):
            return resolve(provider.model, provider.encoding)
        return resolve(provider.model)

    def allowed(self, tool_name: str) -> bool:
        """R1: with the experiment off, session_history is not offered at all."""
        if tool_name == SESSION_HISTORY_TOOL and not self.config.experiment:
            return False
        return may_use(self.policy, tool_name)

    def advertised_tools(self) -> tuple[dict[str, Any], ...]:
        return tuple(self.tools.advertised(self.allowed))

    def count(self, request: ProviderRequest) -> int:
        return count_request(request.system, request.rows, request.tools, self._token_model).tokens

    def build_system(
        self, window: Sequence[Row] | None = None, *, carried: Sequence[FileState] | None = None
    ) -> str:
        """The agent's prompt, a freshly read memory context (R15) and the edited-file
        carryover (R4): ``carried`` when given (a rollover's candidate window), else the list
        the current window (``window``, loaded when omitted) was given when it opened."""
        entries = select_memory(
            load_memories(self.layout),
            token_budget_mode=self.config.experiment,
            count=lambda text: count_text(text, self._token_model).tokens,
        )
        if carried is None:
            carried = self.carryover.carried_into(self.window() if window is None else window)
        return with_carryover(system_text(self.agent.prompt, entries), carried)

    def _may_use_history(self) -> bool:
        return self.config.experiment and self.allowed(SESSION_HISTORY_TOOL)

    # -- the transcript --------------------------------------------------------------------------

    def window(self) -> list[Row]:
        return load_window(self.store)

    def window_id(self) -> str:
        return current_window_id(self.window())

    def _append(self, rows: list[Row]) -> list[Row]:
        return self.store.append(rows)

    def _cleanup_context(self, handoff: Handoff | None = None) -> None:
        """Clear context-scoped caches and the persisted carryover (R10, R21). With a
        ``handoff`` (a rollover or compaction about to append its boundary) the persisted
        carryover becomes the snapshot the new window was given and pending edits are
        cleared, so a crash after the append can never show the new window stale carryover;
        without one (``/clear``) it is deleted."""
        self._context_cache.clear()
        if handoff is None:
            self.carryover.clear()
        else:
            handoff.publish()

    # -- commands ----------------------------------------------------------------------------------

    def clear_soft(self) -> bool:
        """``/clear --soft`` (R10): a reset boundary with no lead-in; a no-op success when the
        active window holds nothing provider-eligible. Returns whether a row was written."""
        self._cleanup_context()
        return soft_reset(self.store, row_id=self.new_id("reset"), now_ms=self.clock())

    def clear_hard(self) -> None:
        """``/clear``: destroys the whole transcript (the CLI asks for confirmation)."""
        self._cleanup_context()
        self.store.clear_all()

    def compact(self, reason: str = "manual") -> str:
        """Summarize the active window into a compaction boundary (R4); returns the new
        window id. Raises CompactionFailed (nothing committed) when no usable summary came."""
        window = self.window()
        rows = active_rows(window)
        if not rows:
            raise CompactionFailed("nothing to compact: the context window is empty")
        system = self.build_system(window)
        request = compaction_request(system, rows, instruction_id=self.new_id("compact"))
        # Manual and automatic /compact keep live middleware filtering (R32).
        request = TurnHooks.start(self).apply(request, current_window_id(window))
        tokens = self.count(request)
        if not self.budget.fits(tokens):
            raise CompactionFailed(
                f"the compaction request itself does not fit ({tokens} tokens > "
                f"{self.budget.hard_ceiling}); use /clear --soft instead"
            )
        try:
            result = self.provider.step(request)
        except ProviderError as exc:
            raise CompactionFailed(f"compaction failed: {exc.message}") from None
        summary = summary_from(result)
        epoch = sum(1 for r in window if r.flag("compactionBoundary")) + 1
        row = compaction_row(
            summary,
            row_id=self.new_id("compaction"),
            now_ms=self.clock(),
            epoch=epoch,
            reason=reason,
            provider=self.provider,
            usage=result.usage.to_obj(),
        )
        # As in a rollover, the carryover is handed to the new window before the append.
        self._cleanup_context(self.carryover.handoff(window, row.id))
        stored = self._append([row])
        window_id = current_window_id(stored)
        self.on_event(Compacted(reason, window_id))
        return window_id

    # -- a turn ------------------------------------------------------------------------------------

    def send(self, text: str, *, cancellation: Cancellation | None = None) -> TurnResult:
        """One user message, run to the end of the turn. ``cancellation`` lets the caller
        hold the turn's cancel flag before the turn starts (a Ctrl-C handler)."""
        self.cancellation = cancellation if cancellation is not None else Cancellation()
        turn = _Turn(self)
        try:
            return turn.run_send(text)
        except ContextSignal as exc:
            status: Status = "paused"
            self.on_event(Notice(exc.message))
            return TurnResult(status, exc.message, self.window_id(), turn.rollovers, turn.text)
        except ProviderError as exc:
            self.on_event(Notice(exc.message))
            return TurnResult("error", exc.message, self.window_id(), turn.rollovers, turn.text)


def soft_reset(store: TranscriptStore, *, row_id: str, now_ms: int) -> bool:
    """R10 without a provider: append a manual reset unless the active window holds nothing
    provider-eligible (then it is a no-op success). Returns whether a row was written."""
    with store.locked():
        if not active_rows(load_window(store)):
            return False
        store.append([manual_reset_row(row_id=row_id, now_ms=now_ms)])
    return True


class _Turn:
    """The state of one running turn."""

    def __init__(self, session: Session) -> None:
        self.s = session
        self.rollovers = 0
        self.text = ""
        self.emergency_used = False
        self.hooks = TurnHooks.start(session)

    # -- helpers -----------------------------------------------------------------------------------

    def _request(self, system: str, window: list[Row]) -> ProviderRequest:
        request = ProviderRequest(system, tuple(active_rows(window)), self.s.advertised_tools())
        return self.hooks.apply(request, current_window_id(window))

    def _situation(self, projected: int, window: list[Row]) -> Situation:
        return Situation(
            projected=projected,
            experiment=self.s.config.experiment,
            may_use_history=self.s._may_use_history(),
            window_has_context=has_sealable_context(window),
            warned=warned_in_window(window),
            notes_writable=self.s.allowed("memory"),
        )

    def _rollover(
        self,
        reason: RolloverReason,
        window: list[Row],
        context_tokens: int,
        trigger: Row | None,
        pending_request: str | None = None,
    ) -> tuple[ProviderRequest, list[Row], str]:
        s = self.s
        plan = RolloverPlan(
            reason=reason,
            previous_window_id=current_window_id(window),
            context_tokens=context_tokens,
            trigger=trigger,
            ids=(s.new_id("rollover"), s.new_id("lead-in"), s.new_id("continue")),
            rollover_id=s.new_id("r"),
            now_ms=s.clock(),
            pending_request=pending_request,
        )
        # The new window's carryover is snapshotted into the candidate system text at prepare
        # and published (pending edits cleared) at cleanup, before the append (R21).
        handoff = s.carryover.handoff(window, plan.ids[0])
        admitted = admit_rollover(
            plan,
            store=s.store,
            budget=s.budget,
            build_system=lambda: s.build_system(carried=handoff.snapshot()),
            tools=s.advertised_tools(),
            count=s.count,
            cleanup=lambda: s._cleanup_context(handoff),
            cancel=s.cancellation,
            checkpoint=s.checkpoint,
            hooks=self.hooks,
        )
        self.rollovers += 1
        s.on_event(RolledOver(reason, plan.previous_window_id, admitted.window_id, context_tokens))
        return admitted.request, admitted.stored, admitted.system

    # -- the send ----------------------------------------------------------------------------------

    def run_send(self, text: str) -> TurnResult:
        s = self.s
        now = s.clock()
        user = make_row("user", text, id=s.new_id("user"), metadata={"timestamp": now})
        self._maybe_idle_compact(now)
        window = s.window()
        system = s.build_system(window)
        tools = s.advertised_tools()

        # R16: a request that cannot fit even a fresh window is rejected, its input quarantined.
        fresh = s.count(ProviderRequest(system, (user,), tools)) + _LEAD_IN_ALLOWANCE
        if not s.budget.fits(fresh):
            s._append([quarantined(user)])
            reason = (
                f"the message does not fit even a fresh context window ({fresh} tokens > "
                f"{s.budget.hard_ceiling} of {s.budget.limit}); it was kept in the transcript "
                "but will not be sent"
            )
            s.on_event(Notice(reason))
            return TurnResult("rejected", reason, current_window_id(window), 0)

        assembled = s.count(ProviderRequest(system, (*active_rows(window), user), tools))
        projected = max(
            assembled, last_step_usage(window) + s.count(ProviderRequest("", (user,), ()))
        )
        decision = decide(s.budget, self._situation(projected, window))
        request: ProviderRequest
        if decision.action is Action.ROLLOVER:
            request, window, system = self._rollover("on-send", window, projected, user)
        else:
            if decision.action is Action.COMPACT:
                self._auto_compact()
                window = s.window()  # the compaction opened a new window
                system = s.build_system(window)  # with the carryover it was given
            elif decision.action in (Action.BLOCK, Action.PAUSE):
                raise TurnPaused(_reason(decision) + " (the message was not sent)")
            window = [*window, *s._append([user])]
            request = self._request(system, window)
        return self._loop(request, window, system, pending=text)

    def _maybe_idle_compact(self, now: int) -> None:
        minutes = self.s.config.idle_compaction_minutes
        if minutes is None:
            return
        window = self.s.window()
        last = next((r.timestamp for r in reversed(window) if r.timestamp is not None), None)
        if last is None or now - last < minutes * 60_000 or not has_sealable_context(window):
            return
        try:
            self.s.compact(reason="idle")
        except CompactionFailed as exc:
            # Idle compaction is opportunistic: the send goes on in the uncompacted window.
            self.s.on_event(Notice(f"idle compaction skipped: {exc.message}"))

    def _auto_compact(self) -> None:
        try:
            self.s.compact(reason="automatic")
        except CompactionFailed as exc:
            raise TurnPaused(f"automatic compaction failed: {exc.message}") from None

    # -- provider steps ----------------------------------------------------------------------------

    def _loop(
        self, request: ProviderRequest, window: list[Row], system: str, *, pending: str
    ) -> TurnResult:
        s = self.s
        for _step in range(s.config.max_steps):
            s.cancellation.check("before a provider step")
            self.hooks.check_window("before a provider step")
            try:
                result = s.provider.step(request, on_event=self._forward)
            except ContextOverflowError as exc:
                request, window, system = self._overflow(exc, window, pending)
                continue
            self._calibrate(request, result.usage.input_tokens)
            outputs = [self._run_tool(call) for call in result.tool_calls]
            row = self._assistant_row(
                result.text, result.tool_calls, outputs, result.usage.to_obj()
            )
            window = [*window, *s._append([row])]
            self.text = result.text
            tokens = (result.usage.input_tokens or 0) + (result.usage.output_tokens or 0)
            s.on_event(
                StepUsage(
                    tokens,
                    s.budget.limit,
                    s.budget.percent(tokens),
                    rollover_label(s.config.threshold),
                )
            )
            if not result.tool_calls:
                return TurnResult(
                    "completed", None, current_window_id(window), self.rollovers, self.text
                )
            request, window, system = self._settled(request, window, system, result.usage, outputs)
        raise TurnPaused(f"the turn stopped after {s.config.max_steps} provider steps")

    def _calibrate(self, request: ProviderRequest, reported: int | None) -> None:
        """Feed provider-reported input usage against our estimate to calibration; a
        scripted provider reports our own count, so it teaches nothing."""
        model = self.s._token_model
        if reported is None or model.family == "scripted":
            return
        calibration_file.record(self.s.layout.home, model.family, self.s.count(request), reported)

    def _forward(self, event: StreamEvent) -> None:
        if isinstance(event, ProviderTextDelta):
            self.s.on_event(AssistantText(event.text))

    def _settled(
        self,
        last: ProviderRequest,
        window: list[Row],
        system: str,
        usage: Any,
        outputs: list[Any],
    ) -> tuple[ProviderRequest, list[Row], str]:
        """The budget check after a settled tool step (R3, R6, R14, R18)."""
        s = self.s
        s.cancellation.check("after a settled tool step")
        request = self._request(system, window)
        assembled = s.count(request)
        reported = (usage.input_tokens or 0) + (usage.output_tokens or 0)
        tool_tokens = sum(_output_tokens(s, o) for o in outputs)
        projected = max(assembled, reported + tool_tokens)
        decision = decide(s.budget, self._situation(projected, window))
        if decision.action is Action.ROLLOVER:
            return self._rollover("mid-stream", window, projected, None)
        if decision.action is Action.WARN:
            percent = s.budget.percent(projected)
            row = warning_row(
                row_id=s.new_id("warning"),
                now_ms=s.clock(),
                percent=percent,
                label=rollover_label(s.config.threshold),
            )
            window = [*window, *s._append([row])]
            s.on_event(Warned(percent, row.text))
            return self._request(system, window), window, system
        if decision.action is Action.COMPACT:
            self._auto_compact()
            window = s.window()
            system = s.build_system(window)  # with the carryover the new window was given
            return self._request(system, window), window, system
        if decision.action in (Action.BLOCK, Action.PAUSE):
            # R18: completed tool results are already durable; nothing else is written.
            raise TurnPaused(_reason(decision))
        return request, window, system

    def _overflow(
        self, exc: ContextOverflowError, window: list[Row], pending: str
    ) -> tuple[ProviderRequest, list[Row], str]:
        """The provider said the request does not fit: the handled backstop (R17)."""
        s = self.s
        automatic = s.config.experiment and s.budget.automatic
        if (
            not automatic
            or self.emergency_used
            or not s._may_use_history()
            or not has_sealable_context(window)
        ):
            raise TurnPaused(f"the provider rejected the request as too large: {exc.message}")
        self.emergency_used = True
        unanswered = window[-1].role == "user" and not window[-1].flag("synthetic")
        return self._rollover(
            "context-exceeded",
            window,
            s.budget.limit,
            None,
            pending_request=pending if unanswered else None,
        )

    # -- tools -------------------------------------------------------------------------------------

    def _run_tool(self, call: ToolCall) -> Any:
        s = self.s
        s.on_event(ToolStarted(call.id, call.name, call.input))
        try:
            output = s.tools.run(
                call.name, call.input, s.allowed, cancelled=lambda: s.cancellation.cancelled
            )
        except Exception as exc:  # noqa: BLE001 - a tool's bug must not lose the settled turn
            output = tool_error("tool_failed", f"{type(exc).__name__}: {exc}")
        output = _guard_output(s, output)
        s.on_event(ToolFinished(call.id, call.name, output))
        return output

    def _assistant_row(
        self,
        text: str,
        calls: tuple[ToolCall, ...],
        outputs: list[Any],
        usage: Mapping[str, int],
    ) -> Row:
        s = self.s
        parts: list[Part] = []
        if text:
            parts.append(Part(type="text", text=text, state="done"))
        for call, output in zip(calls, outputs, strict=True):
            parts.append(
                Part(
                    type="dynamic-tool",
                    toolCallId=call.id,
                    toolName=call.name,
                    input=dict(call.input),
                    state="output-available",
                    output=output,
                )
            )
        return make_row(
            "assistant",
            id=s.new_id("assistant"),
            parts=parts,
            metadata={
                "timestamp": s.clock(),
                "model": s.provider.model,
                "agentId": s.agent.name,
                "usage": dict(usage),
            },
        )


#: The lead-in a fresh window starts with, counted generously for the R16 preflight.
_LEAD_IN_ALLOWANCE = 256


def _reason(decision: Decision) -> str:
    return decision.reason or f"context budget: {decision.action.value}"


def _output_tokens(session: Session, output: Any) -> int:
    return count_text(encode_obj(output).decode("utf-8"), session._token_model).tokens


def _guard_output(session: Session, output: Any) -> Any:
    """The settled-tool-output guard (R17): a result too large to ever fit is replaced by an
    error that says so, with its head, counted with the real encoding."""
    limit = max(256, session.budget.hard_ceiling // 4)
    text = encode_obj(output).decode("utf-8")
    counted = count_text(text, session._token_model, ceiling=limit)
    if counted.tokens <= limit:
        return output
    head = text[: limit * 2]
    return {
        "ok": False,
        "error": {
            "code": "output_too_large",
            "message": f"the tool output exceeds {limit} tokens and was cut; narrow the request",
        },
        "head": head,
    }


__all__ = ["Session", "SessionConfig", "TurnCancelled", "TurnResult"]
