"""segue inside pydantic-ai (``pip install 'segue[pydantic-ai]'``).

:class:`SegueHistory` is one segue workspace seen from pydantic-ai::

    history = SegueHistory("my-task", model="openai:gpt-4o")
    agent = Agent(model, capabilities=[history.capability()])
    await agent.run("…")          # no message_history needed: the store is the history

* Before every model request (a pydantic-ai ``before_model_request`` hook, the place
  history processors run) the messages the store has not seen yet are persisted, one
  all-or-nothing batch, to ``SEGUE_HOME/sessions/<id>/chat.jsonl`` in Xum's row shape.
  A new prompt is a send (R16 preflight, rollover with the prompt as its trigger, R5); any
  later request is a settled step (mid-stream rollover with one continuation, R6).
* The model is handed only the active window, read back from the store (R5-R7): earlier
  windows stay on disk, nothing is summarized, and a restarted process goes on from the
  persisted rows.
* When the run ends, its last messages (the final answer) are persisted too.
* The capability's toolset offers ``session_history`` (SPEC §4) and ``new_context`` (R37).
  Without ``session_history`` among the request's tools a rollover is blocked (R13): the run
  stops with :class:`segue._errors.TurnPaused`.

:meth:`SegueHistory.processor` is the same step as a plain history processor, for
``ProcessHistory(history.processor)``; it counts only segue's own tool schemas.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from segue._errors import UsageError
from segue._extras import install_hint

try:
    from pydantic_ai import AgentRunResult, RunContext, Tool
    from pydantic_ai.capabilities import AbstractCapability
    from pydantic_ai.messages import ModelMessage, ModelRequest
    from pydantic_ai.models import ModelRequestContext
    from pydantic_ai.toolsets import AbstractToolset, FunctionToolset
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise UsageError(f"pydantic-ai is not installed: {install_hint('pydantic-ai')}") from exc

from segue._context.active import active_rows
from segue._context.budget import DEFAULT_THRESHOLD
from segue._messages import Row
from segue._retrieval.schema import DESCRIPTION, TOOL_SCHEMA
from segue.integrations._engine import (
    NEW_CONTEXT,
    NEW_CONTEXT_DESCRIPTION,
    NEW_CONTEXT_SCHEMA,
    SESSION_HISTORY,
    WindowEngine,
    tool_schemas,
)
from segue.integrations._pydantic_rows import (
    ROW_ID_KEY,
    batch_rows,
    calls_of,
    is_send,
    row_messages,
    stored_row_id,
)

__all__ = ["SegueCapability", "SegueHistory"]


class SegueHistory:
    """One segue workspace as pydantic-ai's message history. ``model`` is segue's
    ``provider:name`` for the model the agent runs (its encoding and context limit);
    ``context_window`` and ``encoding`` override them."""

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
    ) -> None:
        self.engine = WindowEngine(
            workspace_id,
            model=model,
            context_window=context_window,
            encoding=encoding,
            threshold=threshold,
            home=home,
            durable=durable,
            store=store,
        )
        self.layout = self.engine.layout
        self.store = self.engine.store
        self._system = ""
        self._tools: list[dict[str, Any]] = tool_schemas([SESSION_HISTORY, NEW_CONTEXT])
        self._may_use_history = True

    # -- what a user calls -----------------------------------------------------------------------

    def capability(self, *, offer_tools: bool = True) -> SegueCapability:
        """The hook and the toolset together: ``Agent(model, capabilities=[...])``. With
        ``offer_tools=False`` the agent gets no ``session_history``: messages persist, and a
        full window pauses the run instead of rolling over (R13)."""
        return SegueCapability(self, offer_tools=offer_tools)

    def toolset(self) -> FunctionToolset[Any]:
        """``session_history`` and ``new_context`` over this workspace."""

        def session_history(**args: Any) -> dict[str, Any]:
            return self.engine.history(args)

        def new_context(reason: str = "") -> dict[str, Any]:
            return self.engine.new_context(
                reason,
                system=self._system,
                tools=self._tools,
                may_use_history=self._may_use_history,
            )

        return FunctionToolset(
            [
                Tool.from_schema(session_history, SESSION_HISTORY, DESCRIPTION, dict(TOOL_SCHEMA)),
                Tool.from_schema(
                    new_context, NEW_CONTEXT, NEW_CONTEXT_DESCRIPTION, dict(NEW_CONTEXT_SCHEMA)
                ),
            ]
        )

    def close(self) -> None:
        """Give back the store's connections (PostgreSQL)."""
        self.engine.close()

    def context_tokens(self) -> int:
        """The active window's size as the next request would count it (the instructions
        and tool schemas of the last request, the model's real encoding): what a context
        meter shows; the rollover point is ``engine.budget``'s."""
        return self.engine.count(self._system, self.engine.active(), self._tools)

    def messages(self) -> list[ModelMessage]:
        """The active window as pydantic-ai messages (what the model is shown)."""
        return _messages_of(self.engine.active())

    async def processor(
        self, ctx: RunContext[Any], messages: list[ModelMessage]
    ) -> list[ModelMessage]:
        """A pydantic-ai history processor: persist, decide, return the active window.
        It sees no tool schemas; whether the agent may look back (R13) is read from the
        agent's toolsets."""
        self._may_use_history = ctx.agent is not None and _offers_history(ctx.agent.toolsets)
        return self.step(messages, system=_instructions(messages), tools=None)

    # -- the step --------------------------------------------------------------------------------

    def step(
        self,
        messages: Sequence[ModelMessage],
        *,
        system: str,
        tools: Sequence[Mapping[str, Any]] | None,
    ) -> list[ModelMessage]:
        """Persist the messages the store has not seen, run the budget check of a send (the
        newest message is a new prompt) or of a settled step, and return what the model may
        see. ``tools`` are the request's tool schemas (None: only segue's own)."""
        self._system = system
        if tools is not None:
            self._tools = [dict(t) for t in tools]
            self._may_use_history = any(t.get("name") == SESSION_HISTORY for t in tools)
        fresh = [m for m in messages if stored_row_id(m) is None]
        rows = self._rows(fresh)
        if fresh and is_send(fresh[-1]):
            if rows[:-1]:
                self.store.append(rows[:-1])
            self.engine.send(
                rows[-1],
                system=self._system,
                tools=self._tools,
                may_use_history=self._may_use_history,
            )
            return _messages_of(self.engine.active())
        stored = self.store.append(rows) if rows else []
        active = self.engine.settle(
            system=self._system,
            tools=self._tools,
            may_use_history=self._may_use_history,
            step=stored,
        )
        return _messages_of(active)

    def flush(self, messages: Sequence[ModelMessage]) -> list[Row]:
        """Persist the messages the store has not seen (the end of a run), one batch, and
        stamp each with its row's id: a caller that goes on with
        ``message_history=result.all_messages()`` hands them back as stored, not as new."""
        fresh = [m for m in messages if stored_row_id(m) is None]
        rows, owners = self._batch(fresh)
        written = self.store.append(rows)
        for message, owner in zip(fresh, owners, strict=True):
            message.metadata = {**(message.metadata or {}), ROW_ID_KEY: written[owner].id}
        return written

    def _rows(self, fresh: Sequence[ModelMessage]) -> list[Row]:
        return self._batch(fresh)[0]

    def _batch(self, fresh: Sequence[ModelMessage]) -> tuple[list[Row], list[int]]:
        if not fresh:
            return [], []
        calls = calls_of(_messages_of(self.engine.active()))
        calls.update(calls_of(fresh))
        return batch_rows(
            fresh,
            new_id=lambda: f"pydantic-ai-{uuid.uuid4().hex[:16]}",
            now_ms=time.time_ns() // 1_000_000,
            calls=calls,
        )


@dataclass
class SegueCapability(AbstractCapability[Any]):
    """pydantic-ai capability: segue's window step before each model request, and the
    ``session_history`` / ``new_context`` toolset."""

    history: SegueHistory
    offer_tools: bool = True

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        params = request_context.model_request_parameters
        tools = [
            {
                "name": t.name,
                "description": t.description or "",
                "input_schema": dict(t.parameters_json_schema),
            }
            for t in params.function_tools
        ]
        messages = self.history.step(
            list(request_context.messages),
            system=_instructions(request_context.messages),
            tools=tools,
        )
        request_context.messages = messages.copy()
        ctx.messages[:] = messages
        return request_context

    async def after_run(
        self, ctx: RunContext[Any], *, result: AgentRunResult[Any]
    ) -> AgentRunResult[Any]:
        # The run's last response is followed by no request: persist it here.
        self.history.flush(result.all_messages())
        return result

    def get_toolset(self) -> FunctionToolset[Any] | None:
        return self.history.toolset() if self.offer_tools else None

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None  # holds a live store: not spec-serializable


def _offers_history(toolsets: Sequence[AbstractToolset[Any]]) -> bool:
    found: list[bool] = []

    def visit(toolset: AbstractToolset[Any]) -> None:
        if isinstance(toolset, FunctionToolset) and SESSION_HISTORY in toolset.tools:
            found.append(True)

    for toolset in toolsets:
        toolset.apply(visit)
    return bool(found)


def _instructions(messages: Sequence[ModelMessage]) -> str:
    for message in reversed(messages):
        if isinstance(message, ModelRequest) and message.instructions:
            return message.instructions
    return ""


def _messages_of(rows: Sequence[Row]) -> list[ModelMessage]:
    return [m for row in active_rows(rows) for m in row_messages(row)]
