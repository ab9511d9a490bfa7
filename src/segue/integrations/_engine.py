"""The context engine as a library: one workspace's store, budget and look-back, for edges
that do not run segue's own turn loop (the framework integrations). No framework import.
Every window decision is the shared one (:mod:`segue._session.window_rules`, which segue's
own turns drive too); this driver adds only what a framework edge needs: a stored message
the model has not answered yet, and a next request that fits no window (RequestRejected).

A framework calls two moments, as segue's turn loop does (R3, R6):

* :meth:`WindowEngine.send` when a human message arrives: preflight against a fresh window
  (R16: a message that can never fit is quarantined, R22, and rejected), then the budget
  decision; a rollover writes boundary, lead-in and the message itself as one batch (R5).
* :meth:`WindowEngine.settle` before each further model request, when the previous step is
  durable: the decision again, a mid-stream rollover with one synthetic continuation.

Both keep R13: a rollover that would seal existing context is blocked (``TurnPaused``) when
the agent cannot call ``session_history``. Rollovers go through segue's own admission
(:func:`segue._session.admission.admit_rollover`, R21): the candidate request (the caller's
system text, the tool schemas and the exact rows of the new window) is counted with the
model's real encoding and must fit before anything is appended. Nothing is summarized.

The framework's own message history is never trusted for what the model sees: the active
window is always re-read from the store, so two processes sharing a workspace agree, and a
restarted process derives pressure from the persisted rows (R7).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from segue._context.active import active_rows
from segue._context.assembly import current_window_id
from segue._context.budget import DEFAULT_THRESHOLD, Budget
from segue._context.rollover import RolloverReason
from segue._errors import RequestRejected, UsageError
from segue._messages import Row
from segue._providers.limits import table_limit
from segue._retrieval.schema import TOOL_SCHEMA
from segue._retrieval.tool import SessionHistoryTool
from segue._session.admission import Admitted, Cancellation
from segue._session.window import load_window
from segue._session.window_rules import (
    Moves,
    Pressure,
    WindowRules,
    awaiting_reply,
    new_context_request,
)
from segue._tokens import count_request, resolve_model
from segue._tokens.registry import split_model
from segue._tools import new_context as _new_context
from segue._tools.builtin import session_history_tool
from segue._workspace import Layout, default_home
from segue.integrations._store import close_store, configured_store

SESSION_HISTORY = "session_history"
NEW_CONTEXT = _new_context.NEW_CONTEXT_TOOL
#: The same description and schema as segue's own sessions offer (R37).
NEW_CONTEXT_DESCRIPTION = _new_context.DESCRIPTION
NEW_CONTEXT_SCHEMA: Mapping[str, Any] = _new_context.SCHEMA



def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _new_id(kind: str) -> str:
    return f"{kind}-{uuid.uuid4().hex[:16]}"


def tool_schemas(names: Sequence[str]) -> list[dict[str, Any]]:
    """Counting shapes of segue's two tools, for edges that advertise them."""
    known: dict[str, dict[str, Any]] = {
        SESSION_HISTORY: {
            "name": SESSION_HISTORY,
            "description": SessionHistoryTool.description,
            "input_schema": dict(TOOL_SCHEMA),
        },
        NEW_CONTEXT: {
            "name": NEW_CONTEXT,
            "description": NEW_CONTEXT_DESCRIPTION,
            "input_schema": dict(NEW_CONTEXT_SCHEMA),
        },
    }
    return [known[n] for n in names if n in known]


class WindowEngine:
    """One workspace's transcript, budget and ``session_history`` for a framework edge.

    ``model`` names the model in segue's ``provider:name`` form; it chooses the encoding the
    guards count with (R17) and, unless ``context_window`` is given, the limit. An unknown
    model needs ``encoding`` (a bundled encoding name) and ``context_window``. The transcript
    lives in the store the user configured: ``store`` (a ``postgresql://`` URL), else the
    home's ``store.url`` setting, else the JSONL files (:mod:`segue.integrations._store`).
    """

    def __init__(
        self,
        workspace_id: str,
        *,
        model: str,
        context_window: int | None = None,
        encoding: str | None = None,
        threshold: int = DEFAULT_THRESHOLD,
        home: Path | str | None = None,
        durable: bool = True,
        store: str | None = None,
        clock: Callable[[], int] = _now_ms,
        new_id: Callable[[str], str] = _new_id,
    ) -> None:
        self.layout = Layout(Path(home) if home is not None else default_home(), workspace_id)
        self.store = configured_store(self.layout, store, durable=durable)
        self.token_model = resolve_model(model, encoding)
        limit = context_window if context_window is not None else table_limit(*split_model(model))
        if limit is None:
            raise UsageError(
                f"the context window of {model} is not known; pass context_window=<tokens>"
            )
        try:
            self.budget = Budget(limit, threshold)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        self.history_tool = session_history_tool(self.layout, self.store)
        self.clock = clock
        self.new_id = new_id
        # The same window rules as segue's own turns; no context-scoped caches, carryover or
        # plugin hooks live in a framework edge, and its cancel flag is never set.
        self.rules = WindowRules(
            store=self.store,
            budget=self.budget,
            count=lambda request: self.count(request.system, request.rows, request.tools),
            new_id=new_id,
            clock=clock,
            cancel=Cancellation(),
        )

    def close(self) -> None:
        """Give back the store's connections (PostgreSQL); the engine may not be used after."""
        close_store(self.store)

    # -- reading ---------------------------------------------------------------------------------

    def window(self) -> list[Row]:
        return load_window(self.store)

    def active(self) -> list[Row]:
        return active_rows(self.window())

    def window_id(self) -> str:
        return current_window_id(self.window())

    def count(self, system: str, rows: Sequence[Row], tools: Sequence[Mapping[str, Any]]) -> int:
        """The request's size counted with the model's real encoding (R17)."""
        return count_request(system, rows, tools, self.token_model).tokens

    def history(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """One ``session_history`` call: bounded, above the floor (R11, R23-R27)."""
        return self.history_tool.call(args)

    # -- the two moments -------------------------------------------------------------------------

    def send(
        self,
        trigger: Row,
        *,
        system: str,
        tools: Sequence[Mapping[str, Any]],
        may_use_history: bool,
    ) -> list[Row]:
        """A human message: preflight, decide, append it (after a rollover batch when the
        window is full). Returns the stored rows."""
        self._preflight(trigger, system, tools, stored=False)
        window = self.window()
        projected = self.rules.projected_at_send(window, trigger, system, _tools(tools))
        return self.rules.at_send(
            window,
            trigger,
            projected,
            pressure=_pressure(may_use_history),
            moves=Moves(
                roll=lambda reason, message, _step: self._roll_over(
                    reason, window, projected, message, system=system, tools=tools
                ).stored,
                go_on=lambda _window, added, _reopened: added,
            ),
        )

    def settle(
        self,
        *,
        system: str,
        tools: Sequence[Mapping[str, Any]],
        may_use_history: bool,
        step: Sequence[Row] = (),
    ) -> list[Row]:
        """Before the next model request, with the previous step durable: decide, roll over
        mid-stream when the window is full, and return the rows the model may see.
        ``step``: the rows the previous step stored (as stored); a mid-stream rollover
        carries their calls and results into the new window, and its lead-in quotes the
        request that owns the turn (:mod:`segue._session.carry`), within admission (R21)."""
        window = self.window()
        rows = active_rows(window)
        last = rows[-1] if rows else None
        unanswered = awaiting_reply(last)
        if unanswered and last is not None:
            self._preflight(last, system, tools, stored=True)
        projected = self.count(system, rows, tools)

        def roll(reason: RolloverReason, _trigger: Row | None, carried: Sequence[Row]) -> list[Row]:
            # A human message the model has not answered yet: the window filled at a send
            # that could not be checked when it was stored. It is quoted into the new window.
            admitted = self._roll_over(
                "on-send" if unanswered else reason,
                window,
                projected,
                None,
                system=system,
                tools=tools,
                pending_request=last.text if unanswered and last is not None else None,
                step=() if unanswered else carried,
            )
            return active_rows(admitted.stored)

        def go_on(now: list[Row], _added: list[Row], _reopened: bool) -> list[Row]:
            if not self.budget.fits(projected):
                # Nothing sealable (else the decision rolled over): the request itself is
                # too large for any window (R16).
                raise RequestRejected(
                    f"the next request ({projected} tokens) does not fit the context window "
                    f"({self.budget.hard_ceiling} of {self.budget.limit}) even fresh"
                )
            return active_rows(now)

        return self.rules.after_step(
            window,
            projected,
            pressure=_pressure(may_use_history),
            step=step,
            moves=Moves(roll=roll, go_on=go_on),
        )

    def new_context(
        self,
        reason: str,
        *,
        system: str,
        tools: Sequence[Mapping[str, Any]],
        may_use_history: bool,
    ) -> dict[str, Any]:
        """The model asked for a fresh window (R37): a rollover like R5's, ``reason``
        ``on-send`` and ``requestedBy: "model"``, answered with the new window's id.

        The rollover seals the window at the last settled step: the step that made this call
        is not durable yet, so it (the call and its result) opens the new window whole."""
        checked = new_context_request(
            {"reason": reason}, may_use_history=may_use_history, who="this agent"
        )
        if isinstance(checked, dict):
            return checked
        window = self.window()

        def roll() -> str:
            projected = self.count(system, active_rows(window), tools)
            return self._roll_over(
                "on-send", window, projected, None, system=system, tools=tools, by_model=True
            ).window_id

        return self.rules.model_rollover(window, roll)

    # -- internals -------------------------------------------------------------------------------

    def _preflight(
        self, message: Row, system: str, tools: Sequence[Mapping[str, Any]], *, stored: bool
    ) -> None:
        """R16: a message that cannot fit even a fresh window is rejected before any model
        call, and kept transcript-only (R22): quarantined in place, or appended so."""
        reason = self.rules.rejection(message, system, _tools(tools), stored=stored)
        if reason is not None:
            raise RequestRejected(reason)

    def _roll_over(
        self,
        reason: RolloverReason,
        window: list[Row],
        context_tokens: int,
        trigger: Row | None,
        *,
        system: str,
        tools: Sequence[Mapping[str, Any]],
        pending_request: str | None = None,
        by_model: bool = False,
        step: Sequence[Row] = (),
    ) -> Admitted:
        return self.rules.roll_over(
            reason,
            window,
            context_tokens,
            trigger,
            build_system=lambda: system,
            tools=_tools(tools),
            pending_request=pending_request,
            requested_by_model=by_model,
            step=step,
        )


def _pressure(may_use_history: bool) -> Pressure:
    # Choosing the rollover edge is the opt-in (R1's experiment); the notes warning (R14)
    # needs segue's memory tool, which a framework agent does not have.
    return Pressure(
        experiment=True, may_use_history=may_use_history, warned=True, notes_writable=False
    )


def _tools(tools: Sequence[Mapping[str, Any]]) -> tuple[dict[str, object], ...]:
    return tuple(dict(t) for t in tools)
