"""The Session: one workspace's conversation, and the commands around turns (send, /clear,
/clear --soft, /compact). A send runs a :class:`~segue._session.turn.Turn`: preflight →
(rollover admission) → provider step → tools → settled step → budget check → … until the
model answers (SPEC.md R1-R7, R13, R14, R16-R18, R21, R22).

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
from collections.abc import Callable, Sequence
from typing import Any

from segue._context.active import active_rows
from segue._context.assembly import current_window_id, system_text
from segue._context.budget import Budget
from segue._context.rollover import manual_reset_row
from segue._errors import (
    CompactionFailed,
    ContextSignal,
    ProviderError,
    TurnCancelled,
)
from segue._events import (
    Compacted,
    EventSink,
    Notice,
    ignore,
)
from segue._history.inflight import stream_in_progress
from segue._history.protocol import TranscriptStore
from segue._memory.hot import select_memory
from segue._memory.pinned import Pin, forget_pin, load_pin, memory_for, pinned_path, save_pin
from segue._memory.store import load_memories
from segue._messages import Row
from segue._policy import SESSION_HISTORY_TOOL, Agent, RuleSet, may_use
from segue._policy.approval import Mode
from segue._providers.base import Provider
from segue._providers.request import ProviderRequest, SystemText
from segue._providers.scripted import forget_positions
from segue._session.admission import (
    Cancellation,
    Checkpoint,
    no_checkpoint,
)
from segue._session.compaction import compaction_request, compaction_row, summary_from
from segue._session.epochs import WINDOW_EPOCHS, WindowEpochs
from segue._session.result import DEFAULT_MAX_STEPS, SessionConfig, Status, TurnResult
from segue._session.stream import TurnStream, refuse_if_streaming
from segue._session.turn import Turn
from segue._session.turn_hooks import TurnHooks
from segue._session.window import load_window
from segue._tokens import count_request, count_text
from segue._tokens.registry import TokenModel, find_family, resolve
from segue._tools.base import ToolRegistry
from segue._tools.carryover import FileState, with_carryover
from segue._tools.carryover_file import CarryoverFile, Handoff
from segue._tools.gate import ApprovalGate
from segue._tools.new_context import NEW_CONTEXT_TOOL
from segue._workspace import Layout
from segue.plugins import PluginRegistry

#: Said after a failed send's error: its message was quarantined (Turn._withdraw).
WITHDRAWN = " (the message got no answer: it is kept in the transcript, never sent again)"


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
        approval: ApprovalGate | None = None,
    ) -> None:
        """``approval`` decides which tool calls run (R38). Without one, calls that change
        the machine are denied, since nobody can be asked: pass
        ``ApprovalGate(Mode.FULL)`` to let every call run, or one with an approver."""
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
        self.approval = approval if approval is not None else ApprovalGate(Mode.ASK)
        self._token_model = self._resolve_token_model(provider)
        #: Context-scoped state (R21: the only thing cleared before a rollover's append).
        self._context_cache: dict[str, Any] = {}
        self._unsaved_pin: Pin | None = None  # a memory pin not yet on disk (_memory_entries)
        #: The edited-file carryover (R4, R10, R21), shared through its file with the tools.
        self.carryover = CarryoverFile(layout, store)

    # -- policy and counting ---------------------------------------------------------------------

    @staticmethod
    def _resolve_token_model(provider: Provider) -> TokenModel:
        # A known family counts with its encoding and correction factor; a scripted model or
        # one the user named an encoding for (``encoding.<model>``) counts with that encoding.
        if provider.model.startswith("scripted:") or find_family(provider.model) is None:
            return resolve(provider.model, provider.encoding)
        return resolve(provider.model)

    def allowed(self, tool_name: str) -> bool:
        """R1: with the experiment off, session_history and new_context are not offered."""
        if tool_name in (SESSION_HISTORY_TOOL, NEW_CONTEXT_TOOL) and not self.config.experiment:
            return False
        return may_use(self.policy, tool_name)

    def advertised_tools(self) -> tuple[dict[str, Any], ...]:
        """What the provider is offered: with tool search (R20), deferrable schemas wait
        behind ``tool_search`` when the allowed ones would pass the registry's share of the
        window; preflight counts exactly this list."""
        share = self.budget.limit * self.tools.defer_percent // 100

        def fits(schemas: list[dict[str, Any]]) -> bool:
            return count_request("", (), schemas, self._token_model).tokens <= share

        return tuple(self.tools.advertised(self.allowed, fits=fits))

    def close(self) -> None:
        """Stop what the session started (MCP servers) and give back what its store holds
        (PostgreSQL's connections; a store used again afterwards opens new ones)."""
        try:
            self.tools.close()
        finally:
            self.store.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def count(self, request: ProviderRequest) -> int:
        return count_request(request.system, request.rows, request.tools, self._token_model).tokens

    def build_system(
        self, window: Sequence[Row] | None = None, *, carried: Sequence[FileState] | None = None
    ) -> str:
        """The agent's prompt, the window's memory context (R15) and the edited-file
        carryover (R4): ``carried`` when given (a rollover's candidate window, whose memory is
        read fresh), else the list the current window (``window``, loaded when omitted) was
        given when it opened.

        The text is a :class:`~segue._providers.request.SystemText` whose head is the agent's
        prompt, the part every window repeats; memory is read once per window and pinned
        (:mod:`segue._memory.pinned`), so every request of a window sends the same system
        text and the prompt cache keeps what earlier requests wrote."""
        if carried is None:
            rows = self.window() if window is None else window
            carried = self.carryover.carried_into(rows)
            entries = self._memory_entries(current_window_id(rows))
        else:
            entries = self._memory_entries(None)
        prompt = system_text(self.agent.prompt, [])
        return SystemText(with_carryover(system_text(self.agent.prompt, entries), carried),
                          len(prompt))

    def _memory_entries(self, window_id: str | None) -> list[str]:
        # Memory is on for an agent that may use the memory tool; the experiment adds the
        # notes entry but never turns memory on by itself (R15).
        if not self.allowed("memory"):
            return []
        path = pinned_path(self.layout)

        def fresh() -> list[str]:
            return select_memory(
                load_memories(self.layout),
                token_budget_mode=self.config.experiment,
                count=lambda text: count_text(text, self._token_model).tokens,
            )

        entries, pin = memory_for(self._unsaved_pin or load_pin(path), window_id, fresh)
        if pin is not None:
            self._unsaved_pin = pin
        # The file never creates a session directory (a workspace nothing was written to
        # stays absent) nor is written beside a Xum stream in progress (SPEC.md §3): until it
        # can be, this process keeps the pin itself, so its requests stay byte-stable.
        if (
            self._unsaved_pin is not None
            and self.layout.session_dir.is_dir()
            and not stream_in_progress(self.layout)
            and save_pin(path, self._unsaved_pin)
        ):
            self._unsaved_pin = None
        return entries

    def _may_use_history(self) -> bool:
        return self.config.experiment and self.allowed(SESSION_HISTORY_TOOL)

    def may_request_new_context(self) -> bool:
        """R37 under R12 and R13: the agent may call new_context and a fresh window would
        leave it session_history to reach what the old one held."""
        return self._may_use_history() and self.allowed(NEW_CONTEXT_TOOL)

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
            forget_pin(pinned_path(self.layout))  # the next window reads memory afresh
            self._unsaved_pin = None
            self.carryover.clear()
        else:
            handoff.publish()

    # -- commands ----------------------------------------------------------------------------------

    def clear_soft(self) -> bool:
        """``/clear --soft`` (R10): a reset boundary with no lead-in; a no-op success when the
        active window holds nothing provider-eligible. Returns whether a row was written."""
        refuse_if_streaming(self, "clear the context")
        self._cleanup_context()
        return soft_reset(self.store, row_id=self.new_id("reset"), now_ms=self.clock())

    def clear_hard(self) -> None:
        """``/clear``: destroys the whole transcript and the tasks' workspaces (the CLI asks
        for confirmation); a scripted model starts its script over, as the conversation it
        played is gone."""
        refuse_if_streaming(self, "clear the transcript")
        self._cleanup_context()
        self.store.clear_all()
        forget_positions(self.layout.script_positions)
        from segue._session.tasks import clear_tasks

        clear_tasks(self.layout, self.store)  # R41: the tasks it ran are destroyed with it

    def compact(self, reason: str = "manual") -> str:
        """Summarize the active window into a compaction boundary (R4); returns the new
        window id. Raises CompactionFailed (nothing committed) when no usable summary came."""
        refuse_if_streaming(self, "compact")
        window = self.window()
        rows = active_rows(window)
        if not rows:
            raise CompactionFailed("nothing to compact: the context window is empty")
        system = self.build_system(window)
        # The window's own tools and system text: the summary request repeats the prefix the
        # window's turns wrote to the prompt cache and reads it back.
        request = compaction_request(system, rows, self.advertised_tools(),
                                     instruction_id=self.new_id("compact"))
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
        refuse_if_streaming(self, "send")
        self.cancellation = cancellation if cancellation is not None else Cancellation()
        turn = Turn(self)
        try:
            return turn.run_send(text)
        except ContextSignal as exc:
            status: Status = "paused"
            self.on_event(Notice(exc.message))
            return TurnResult(status, exc.message, self.window_id(), turn.rollovers, turn.text,
                              turn.usage.to_obj())
        except ProviderError as exc:
            reason = exc.message + (WITHDRAWN if turn.withdrawn else "")
            self.on_event(Notice(reason))
            return TurnResult("error", reason, self.window_id(), turn.rollovers, turn.text,
                              turn.usage.to_obj())

    def stream(self, text: str) -> TurnStream:
        """One user message, its events as they happen: ``for event in session.stream(text)``
        or ``async for``; afterwards ``.result`` is the :class:`TurnResult` ``send`` returns.
        Leaving the loop early (or ``cancel()``) stops the turn at once, a streaming reply kept
        as far as it came (settled steps stay), and waits for it (:mod:`segue._session.stream`)."""
        return TurnStream(self, text)

    async def asend(self, text: str) -> TurnResult:
        """``send`` for async code: the turn runs in a worker thread, an async approver is
        awaited on this event loop, and cancelling the awaiting task cancels the turn."""
        stream = self.stream(text)
        async for _event in stream:
            pass
        return stream.result


def soft_reset(store: TranscriptStore, *, row_id: str, now_ms: int) -> bool:
    """R10 without a provider: append a manual reset unless the active window holds nothing
    provider-eligible (then it is a no-op success). Returns whether a row was written."""
    with store.locked():
        if not active_rows(load_window(store)):
            return False
        store.append([manual_reset_row(row_id=row_id, now_ms=now_ms)])
    return True


__all__ = [
    "DEFAULT_MAX_STEPS",
    "Session",
    "SessionConfig",
    "Status",
    "TurnCancelled",
    "TurnResult",
    "soft_reset",
]
