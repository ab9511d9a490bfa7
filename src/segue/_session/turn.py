"""One running turn: segue's own driver of the window rules (SPEC.md R3, R5-R7, R13, R14,
R16-R18, R21, R22, R37, R40). The rules (:mod:`segue._session.window_rules`: preflight, the
budget decision and what follows it, the overflow backstop, R37's call, the rollover plan)
are the same ones the framework edges drive; what lives here is what only this driver has:
the provider steps, the tools, output limits, interrupts, and the system text, carryover and
plugin hooks a rollover or compaction is given.

The :class:`~segue._session.core.Session` owns what lives across turns (store, provider, policy,
carryover, plugins); a :class:`Turn` holds what one send needs and is dropped at its end.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from segue._context.active import active_rows
from segue._context.assembly import current_window_id, warned_in_window
from segue._context.boundaries import WARNING_TYPE, item_id
from segue._context.budget import (
    trigger_label,
)
from segue._context.rollover import (
    RolloverReason,
    compaction_continuation_row,
)
from segue._errors import (
    CompactionFailed,
    ContextOverflowError,
    ProviderError,
    SegueError,
    TurnCancelled,
    TurnPaused,
)
from segue._events import (
    AssistantText,
    Notice,
    RolledOver,
    StepUsage,
    ToolFinished,
    ToolStarted,
    Warned,
)
from segue._fsutil import describe_os_error
from segue._messages import Part, Row, encode_obj, make_row, with_metadata
from segue._providers.base import StreamEvent, Usage
from segue._providers.base import TextDelta as ProviderTextDelta
from segue._providers.request import ProviderRequest, Reasoning, ToolCall, reasoning_part
from segue._session.result import OutputLimit, TurnResult, UsageTotal
from segue._session.stoppable import Interrupted, run_step
from segue._session.turn_hooks import TurnHooks
from segue._session.window_rules import (
    Moves,
    Pressure,
    WindowRules,
    idle_compaction_due,
    new_context_request,
)
from segue._tokens import calibration_file, count_text
from segue._tools.base import tool_error
from segue._tools.new_context import NEW_CONTEXT_TOOL

if TYPE_CHECKING:
    from segue._session.core import Session


class Turn:
    """The state of one running turn."""

    def __init__(self, session: Session) -> None:
        self.s = session
        self.rollovers = 0
        self.text = ""
        self.emergency_used = False
        self.hooks = TurnHooks.start(session)
        self.length = OutputLimit()
        self.usage = UsageTotal()
        #: The reason of a new_context call (R37) in the step being run, until it settles.
        self.new_context: str | None = None
        #: Whether a reply of this turn reached the transcript (a settled step, cut text).
        self.replied = False
        #: Whether the message of a failed send was quarantined (never sent again).
        self.withdrawn = False

    # -- helpers -----------------------------------------------------------------------------------

    @property
    def rules(self) -> WindowRules:
        """The window rules this turn shares with the framework edges."""
        s = self.s
        return WindowRules(
            store=s.store,
            budget=s.budget,
            count=s.count,
            new_id=s.new_id,
            clock=s.clock,
            cancel=s.cancellation,
            checkpoint=s.checkpoint,
        )

    def _request(self, system: str, window: list[Row]) -> ProviderRequest:
        request = ProviderRequest(system, tuple(active_rows(window)), self.s.advertised_tools())
        return self.hooks.apply(request, current_window_id(window))

    def _pressure(self, window: list[Row]) -> Pressure:
        return Pressure(
            experiment=self.s.config.experiment,
            may_use_history=self.s._may_use_history(),
            warned=warned_in_window(window),
            notes_writable=self.s.allowed("memory"),
            offer_new_context=self.s.may_request_new_context(),
        )

    def _moves(
        self,
        window: list[Row],
        system: str,
        projected: int,
        *,
        ready: ProviderRequest | None = None,
    ) -> Moves[tuple[ProviderRequest, list[Row], str]]:
        """How this turn goes on from a moment of the shared window rules: its rollover, its
        compaction, and the next request over the window as stored (``ready``, when the
        moment changed nothing)."""
        s = self.s

        def go_on(
            now: list[Row], added: list[Row], reopened: bool
        ) -> tuple[ProviderRequest, list[Row], str]:
            # After a compaction, the system text has the carryover the new window was given.
            text = s.build_system(now) if reopened else system
            for row in added:
                if row.mux_type == WARNING_TYPE:
                    s.on_event(Warned(s.budget.percent(projected), row.text))
            if ready is not None and not added and not reopened:
                return ready, now, text
            return self._request(text, now), now, text

        return Moves(
            roll=lambda reason, trigger, step: self._rollover(
                reason, window, projected, trigger, step=step
            ),
            go_on=go_on,
            compact=self._auto_compact,
        )

    def _rollover(
        self,
        reason: RolloverReason,
        window: list[Row],
        context_tokens: int,
        trigger: Row | None,
        pending_request: str | None = None,
        *,
        requested_by_model: bool = False,
        step: Sequence[Row] = (),
    ) -> tuple[ProviderRequest, list[Row], str]:
        """Roll over through admission (R21). A turn it interrupts (no human trigger) has
        its request quoted into the lead-in and ``step``'s calls with their results carried
        into the new window (:mod:`segue._session.carry`)."""
        s = self.s
        previous = current_window_id(window)
        # The new window's carryover is snapshotted into the candidate system text at prepare
        # and published (pending edits cleared) at cleanup, before the append (R21).
        boundary_id = s.new_id("rollover")
        handoff = s.carryover.handoff(window, boundary_id)
        admitted = self.rules.roll_over(
            reason,
            window,
            context_tokens,
            trigger,
            build_system=lambda: s.build_system(carried=handoff.snapshot()),
            tools=s.advertised_tools(),
            cleanup=lambda: s._cleanup_context(handoff),
            hooks=self.hooks,
            pending_request=pending_request,
            requested_by_model=requested_by_model,
            flush_opportunity=warned_in_window(window),
            step=step,
            boundary_id=boundary_id,
        )
        self.rollovers += 1
        s.on_event(RolledOver(reason, previous, admitted.window_id, context_tokens))
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
        reason = self.rules.rejection(user, system, tools, stored=False)
        if reason is not None:
            s.on_event(Notice(reason))
            return TurnResult("rejected", reason, current_window_id(window), 0)

        projected = self.rules.projected_at_send(window, user, system, tools)
        request, window, system = self.rules.at_send(
            window,
            user,
            projected,
            pressure=self._pressure(window),
            moves=self._moves(window, system, projected),
        )
        # The message as stored (with its sequence), alone or as a rollover's trigger.
        sent = next((r for r in reversed(window) if r.id == user.id), None)
        try:
            return self._loop(request, window, system, pending=text)
        except ProviderError as exc:
            if sent is not None and not self.replied and not self.emergency_used:
                self._withdraw(sent, exc)
            raise

    def _withdraw(self, sent: Row, exc: ProviderError) -> None:
        """The model failed before any reply of this turn settled: the message stays in the
        transcript, quarantined (R22's transcript-only shape, with the failure), so it is
        shown as not sent and never replayed; the next send does not carry it again. (After
        a settled step, the message is the start of real work and stays as it is.)"""
        try:
            self.s.store.quarantine(item_id(sent), send_failure=exc.message)
            self.withdrawn = True
        except (SegueError, OSError) as problem:  # a full disk fails sends and rewrites alike
            why = problem.message if isinstance(problem, SegueError) else describe_os_error(problem)
            self.s.on_event(Notice(f"the failed message stays in the window and will be sent "
                                   f"again with the next one: {why}"))

    def _maybe_idle_compact(self, now: int) -> None:
        if not idle_compaction_due(self.s.window(), now, self.s.config.idle_compaction_minutes):
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
                step = run_step(s.provider, request, self._forward, s.cancellation)
            except ContextOverflowError as exc:
                request, window, system = self._overflow(exc, window, pending)
                continue
            if isinstance(step, Interrupted):
                self._interrupted(step.text)
            result = step
            self._calibrate(request, result.usage.input_tokens)
            self.usage.add(result.usage)
            if result.truncated_call is not None:
                # Never run a call the output limit cut off (nor its siblings: the turn stops).
                if result.text:
                    s._append([self._assistant_row(result.text, (), [], result.usage.to_obj(),
                                                   finish_reason=result.finish_reason)])
                    self.replied = True
                    self.text = result.text
                raise TurnPaused(self.length.cut_call(result.truncated_call, result.tool_calls))
            self.new_context = None
            outputs = [self._run_tool(call) for call in result.tool_calls]
            usage = result.usage
            if self.new_context is not None:
                window, system, outputs = self._model_rollover(
                    request, window, system, result.tool_calls, outputs
                )
                usage = Usage()  # the fresh window is measured from what it holds
            row = self._assistant_row(
                result.text, result.tool_calls, outputs, result.usage.to_obj(),
                finish_reason=result.finish_reason, reasoning=result.reasoning,
            )
            window = [*window, *s._append([row])]
            self.replied = True
            self.text = result.text
            # No usage in the stream: segue's own count of the request, marked as an estimate.
            estimated = result.usage.input_tokens is None
            tokens = (s.count(request) if estimated else result.usage.input_tokens or 0) + (
                result.usage.output_tokens or 0)
            s.on_event(
                StepUsage(
                    tokens,
                    s.budget.limit,
                    s.budget.percent(tokens),
                    trigger_label(s.budget, experiment=s.config.experiment),
                    result.usage.cache_read_tokens,
                    result.usage.cache_write_tokens,
                    estimated=estimated,
                )
            )
            if not result.tool_calls:
                if result.finish_reason == "length":
                    # The text was cut at the output limit: continue it once (R3's reserve
                    # was all the reply could have), after the same budget check as a tool step.
                    self.length.continue_text()
                    request, window, system = self._settled(request, window, system,
                                                            result.usage, [])
                    if window[-1].role == "assistant":
                        window = [*window, *s._append([self._continuation()])]
                        request = self._request(system, window)
                    continue
                return TurnResult(
                    "completed", None, current_window_id(window), self.rollovers, self.text,
                    self.usage.to_obj(),
                )
            request, window, system = self._settled(request, window, system, usage, outputs)
        raise TurnPaused(f"the turn stopped after {s.config.max_steps} provider steps")

    def _interrupted(self, text: str) -> NoReturn:
        """R40: the reply was stopped while it streamed. The text received so far is kept as
        the reply, marked the way Xum marks a stopped stream (``metadata.partial``); none of
        the step's tool calls runs."""
        s = self.s
        if text:
            s._append([with_metadata(self._assistant_row(text, (), [], {}), partial=True)])
            self.replied = True
            self.text = text
        raise TurnCancelled(INTERRUPTED_REPLY if text else INTERRUPTED_BEFORE_REPLY)

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
        return self.rules.after_step(
            window,
            projected,
            pressure=self._pressure(window),
            # The step just settled is the last row: its results travel with the turn.
            step=window[-1:] if outputs else [],
            moves=self._moves(window, system, projected, ready=request),
        )

    def _overflow(
        self, exc: ContextOverflowError, window: list[Row], pending: str
    ) -> tuple[ProviderRequest, list[Row], str]:
        """The provider said the request does not fit: the handled backstop (R17)."""
        s = self.s
        pending_request, step = self.rules.at_overflow(
            window,
            pressure=self._pressure(window),
            used=self.emergency_used,
            why=exc.message,
            pending=pending,
        )
        self.emergency_used = True
        return self._rollover(
            "context-exceeded", window, s.budget.limit, None,
            pending_request=pending_request, step=step,
        )

    # -- tools -------------------------------------------------------------------------------------

    def _model_rollover(
        self,
        last: ProviderRequest,
        window: list[Row],
        system: str,
        calls: tuple[ToolCall, ...],
        outputs: list[Any],
    ) -> tuple[list[Row], str, list[Any]]:
        """R37: the model called new_context in this step. The window is sealed at the last
        settled step, exactly as R5 rolls over (``on-send``, ``requestedBy: "model"``); the
        step itself (its calls with their results) then opens the new window, and the call
        is answered with the new window's id. A rollover admission refuses (the fresh window
        would not fit, a plugin blocks it) → ``not_allowed`` and nothing is rolled over; the
        step still settles in the old window, and the settled-step checks stop the turn where
        they must (a cancel, another send rolled the window over)."""
        s = self.s

        def roll() -> str:
            nonlocal window, system
            _request, window, system = self._rollover(
                "on-send", window, s.count(last), None, requested_by_model=True
            )
            return current_window_id(window)

        answer = self.rules.model_rollover(window, roll)
        answered: list[Any] = []
        for call, out in zip(calls, outputs, strict=True):
            if call.name == NEW_CONTEXT_TOOL and _is_pending(out):
                s.on_event(ToolFinished(call.id, call.name, answer))
                answered.append(answer)
            else:
                answered.append(out)
        return window, system, answered

    def _new_context_call(self, call: ToolCall) -> Any:
        """A new_context call: checked now under tool policy and R13, carried out when the
        step settles (:meth:`_model_rollover`)."""
        s = self.s
        reason = new_context_request(
            call.input,
            may_use_history=s.may_request_new_context(),
            who=f"agent {s.agent.name!r}",
            experiment=s.config.experiment,
            allowed=s.allowed(NEW_CONTEXT_TOOL),
        )
        if isinstance(reason, dict):
            return reason
        self.new_context = reason
        return dict(_PENDING)

    def _run_tool(self, call: ToolCall) -> Any:
        s = self.s
        s.on_event(ToolStarted(call.id, call.name, call.input))
        if call.name == NEW_CONTEXT_TOOL and s.tools.get(NEW_CONTEXT_TOOL) is not None:
            output = self._new_context_call(call)
            if not _is_pending(output):
                s.on_event(ToolFinished(call.id, call.name, output))
            return output
        try:
            output = s.tools.run(
                call.name,
                call.input,
                s.allowed,
                cancelled=lambda: s.cancellation.cancelled,
                approve=s.approval.check,  # R38: a denial is this call's durable result
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
        *,
        finish_reason: str | None = None,
        reasoning: tuple[Reasoning, ...] = (),
    ) -> Row:
        s = self.s
        parts: list[Part] = [reasoning_part(item) for item in reasoning]
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
        metadata: dict[str, Any] = {
            "timestamp": s.clock(),
            "model": s.provider.model,
            "agentId": s.agent.name,
            "usage": dict(usage),
        }
        if finish_reason is not None:
            metadata["finishReason"] = finish_reason  # Xum's key, the AI SDK's values
        return make_row("assistant", id=s.new_id("assistant"), parts=parts, metadata=metadata)

    def _continuation(self) -> Row:
        """The synthetic user row after a reply cut at the output limit (the same row a
        mid-turn compaction continues with)."""
        return compaction_continuation_row(row_id=self.s.new_id("continue"), now_ms=self.s.clock())


#: The reason a turn stopped mid-reply ends with (R40).
INTERRUPTED_REPLY = "interrupted: the reply was stopped; the text received so far is kept"
INTERRUPTED_BEFORE_REPLY = "interrupted before the model replied"

#: A new_context call's output until its step settles; never reaches the transcript.
_PENDING = {"ok": True, "pending": "new_context"}


def _is_pending(output: Any) -> bool:
    return isinstance(output, dict) and output == _PENDING


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
