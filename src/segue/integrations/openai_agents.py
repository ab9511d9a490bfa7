"""segue inside the OpenAI Agents SDK (``pip install 'segue[openai-agents]'``).

:class:`SegueSession` is the SDK's ``Session`` protocol (``get_items``, ``add_items``,
``pop_item``, ``clear_session``) over segue's transcript store: every item is a row of
``SEGUE_HOME/sessions/<session_id>/chat.jsonl`` in Xum's shape (see ``agents_rows``), each
``add_items`` one all-or-nothing, fsync'd batch under the workspace's cross-process lock.
``get_items`` reads the active window from disk on every call, so two processes sharing a
session see each other's items in order. ``pop_item`` truncates the newest row (never a
window boundary); ``clear_session`` is segue's ``/clear``.

:class:`RolloverSession` adds the context engine, instead of the SDK's compaction::

    session = RolloverSession("my-task", model="openai:gpt-4o")
    agent = Agent(name="worker", tools=[*my_tools, *session.tools()])
    await Runner.run(agent, "…", session=session, run_config=session.run_config())

* when the caller's message arrives (``add_items`` of the turn input) and before every later
  model call (the run config's ``call_model_input_filter``, which the SDK calls after the
  previous step's items were saved: a settled step), the next request is counted with the
  model's real encoding; at the threshold a fresh window starts (R5 rows, nothing
  summarized) and the model is sent only the active window. The first message a process
  stores comes before it has seen the agent, so R13 cannot be checked then: that message is
  stored as it is, and if the window is full the rollover happens before the first model
  call, quoting the message into the new window's continuation;
* ``session.tools()`` gives the agent ``session_history`` (bounded, above the privacy floor)
  and ``new_context`` (R37);
* an agent without ``session_history`` is not rolled over (R13): the run stops with
  :class:`segue._errors.TurnPaused`, whose message says why.

Store calls are synchronous (they are short and fsync'd); call them from one event loop.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from segue._errors import UsageError
from segue._extras import install_hint

try:
    from agents import Agent, FunctionTool, RunConfig
    from agents.memory import SessionSettings
    from agents.run_config import CallModelData, ModelInputData
    from agents.tool_context import ToolContext
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise UsageError(
        f"the OpenAI Agents SDK is not installed: {install_hint('openai-agents')}"
    ) from exc

from segue._context.active import active_rows
from segue._context.boundaries import is_boundary, item_id
from segue._context.budget import DEFAULT_THRESHOLD
from segue._history.protocol import RemovesNewest, TranscriptStore
from segue._messages import Row
from segue._retrieval.schema import DESCRIPTION, TOOL_SCHEMA
from segue._session.window import load_window
from segue._tools.base import tool_error
from segue._workspace import Layout, default_home
from segue.integrations._agents_rows import (
    batch_rows,
    calls_of,
    is_human_input,
    row_items,
    rows_items,
)
from segue.integrations._engine import (
    NEW_CONTEXT,
    NEW_CONTEXT_DESCRIPTION,
    NEW_CONTEXT_SCHEMA,
    SESSION_HISTORY,
    WindowEngine,
    tool_schemas,
)
from segue.integrations._store import close_store, configured_store

__all__ = ["RolloverSession", "SegueSession", "history_tools"]


class SegueSession:
    """The Agents SDK ``Session`` protocol on segue's crash-safe, lock-protected store.
    ``session_id`` is the segue workspace id (``[A-Za-z0-9._-]{1,64}``)."""

    def __init__(
        self,
        session_id: str,
        *,
        home: Path | str | None = None,
        durable: bool = True,
        session_settings: SessionSettings | None = None,
        store: str | None = None,
    ) -> None:
        self.session_id = session_id
        self.session_settings = session_settings
        self.layout = Layout(Path(home) if home is not None else default_home(), session_id)
        self.store: TranscriptStore = configured_store(self.layout, store, durable=durable)

    def close(self) -> None:
        """Give back the store's connections (PostgreSQL)."""
        close_store(self.store)

    # -- the Session protocol --------------------------------------------------------------------

    async def get_items(self, limit: int | None = None) -> list[Any]:
        """The active window's items, oldest first; with ``limit``, the newest ``limit``.
        Exactly what was stored: a call whose output was popped comes back as it was."""
        items = rows_items(active_rows(load_window(self.store), drop_unanswered=False))
        if limit is None:
            return items
        return items[-limit:] if limit > 0 else []

    async def add_items(self, items: list[Any]) -> None:
        self._append(items)

    async def pop_item(self) -> Any | None:
        """Remove and return the newest item (its whole row); None when the window holds
        none. A window boundary is never removed (R11)."""
        store = self.store
        if not isinstance(store, RemovesNewest):
            raise UsageError(
                "pop_item needs a store that can remove its newest row (the JSONL store): "
                "this one only grows (PostgreSQL)"
            )
        for _attempt in range(3):
            rows = [r for r in load_window(self.store) if not is_boundary(r)]
            if not rows:
                return None
            row = rows[-1]
            with self.store.locked():
                if store.drop_last(item_id(row)) is None:
                    continue  # another process appended meanwhile: look again
                items = row_items(row)
                if len(items) > 1:
                    # A step's row holds several items: the others stay, as they were
                    # stored (a call whose output is popped is a call alone again).
                    self.store.append(self._rows(items[:-1]))
                return items[-1] if items else None
        return None

    async def clear_session(self) -> None:
        """segue's ``/clear``: every row of the session is deleted."""
        self.store.clear_all()

    # -- rows ------------------------------------------------------------------------------------

    def _append(self, items: Sequence[Mapping[str, Any]]) -> list[Row]:
        return self.store.append(self._rows(items)) if items else []

    def _rows(self, items: Sequence[Mapping[str, Any]]) -> list[Row]:
        calls = calls_of(rows_items(load_window(self.store)))
        calls.update(calls_of(items))
        return batch_rows(items, new_id=self._row_id, now_ms=_now_ms(), calls=calls)

    @staticmethod
    def _row_id() -> str:
        return f"agents-{uuid.uuid4().hex[:16]}"


class RolloverSession(SegueSession):
    """A :class:`SegueSession` that rolls over to fresh windows at the threshold and gives
    the agent ``session_history`` and ``new_context``. ``model`` is segue's
    ``provider:name`` for the model the agent runs (its encoding and context limit);
    ``context_window`` and ``encoding`` override them."""

    def __init__(
        self,
        session_id: str,
        *,
        model: str,
        context_window: int | None = None,
        encoding: str | None = None,
        threshold: int = DEFAULT_THRESHOLD,
        home: Path | str | None = None,
        durable: bool = True,
        session_settings: SessionSettings | None = None,
        store: str | None = None,
    ) -> None:
        super().__init__(
            session_id, home=home, durable=durable, session_settings=session_settings,
            store=store,
        )
        self.engine = WindowEngine(
            session_id,
            model=model,
            context_window=context_window,
            encoding=encoding,
            threshold=threshold,
            home=self.layout.home,
            durable=durable,
            store=store,
        )
        close_store(self.store)  # the engine's store is the session's from here on
        self.store = self.engine.store
        # What the last model request looked like; a send is measured against it (the SDK
        # saves the turn input before it builds the first request of the run). Until this
        # process has seen one, whether the agent may use session_history is unknown (None).
        self._system = ""
        self._tools: list[dict[str, Any]] = tool_schemas([SESSION_HISTORY, NEW_CONTEXT])
        self._may_use_history: bool | None = None
        # The rows stored since the last model call: the step the next check settles.
        self._step: list[Row] = []

    def tools(self) -> list[FunctionTool]:
        """``session_history`` and ``new_context`` as function tools of this session."""
        return history_tools(self)

    def context_tokens(self) -> int:
        """The active window's size as the next request would count it (the agent's
        instructions and tool schemas as last seen, the model's real encoding): what a
        context meter shows; the rollover point is ``engine.budget``'s."""
        return self.engine.count(self._system, self.engine.active(), self._tools)

    def run_config(self, **options: Any) -> RunConfig:
        """A ``RunConfig`` whose model-input filter keeps the model on the active window."""
        return RunConfig(call_model_input_filter=self.filter_model_input, **options)

    async def add_items(self, items: list[Any]) -> None:
        # With the agent still unknown, the message is appended as it is: R13 cannot be
        # checked yet, so the filter decides before the first model call (an on-send
        # rollover then quotes the message into the new window's continuation).
        if len(items) == 1 and is_human_input(items[0]) and self._may_use_history is not None:
            (row,) = self._rows(items)
            self.engine.send(
                row,
                system=self._system,
                tools=self._tools,
                may_use_history=self._may_use_history,
            )
            self._step = []
            return
        self._step.extend(self._append(items))

    async def filter_model_input(self, data: CallModelData[Any]) -> ModelInputData:
        """The settled-step check before each model call: roll over when the window is
        full, and hand the model only the active window (read from the store)."""
        self._observe(data.agent, data.model_data.instructions)
        step, self._step = self._step, []
        rows = self.engine.settle(
            system=self._system,
            tools=self._tools,
            may_use_history=bool(self._may_use_history),
            step=step,
        )
        # The items are the SDK's own (stored verbatim) or plain messages and tool pairs.
        items: list[Any] = rows_items(rows)
        return ModelInputData(input=items, instructions=data.model_data.instructions)

    def _observe(self, agent: Agent[Any], instructions: str | None) -> None:
        self._system = instructions or ""
        schemas: list[dict[str, Any]] = []
        usable = False
        for tool in agent.tools:
            if isinstance(tool, FunctionTool):
                if tool.is_enabled is False:
                    continue
                schemas.append(
                    {
                        "name": tool.name,
                        "description": tool.description,
                        "input_schema": tool.params_json_schema,
                    }
                )
                usable = usable or tool.name == SESSION_HISTORY
            else:
                schemas.append({"name": getattr(tool, "name", type(tool).__name__)})
        self._tools = schemas
        self._may_use_history = usable


def history_tools(session: RolloverSession) -> list[FunctionTool]:
    """``session_history`` (SPEC §4) and ``new_context`` (R37) for ``session``'s workspace."""

    async def look_back(_ctx: ToolContext[Any], raw: str) -> str:
        args = _arguments(raw)
        if args is None:
            result = tool_error("invalid_argument", "arguments must be a JSON object")
        else:
            result = session.engine.history(args)
        return json.dumps(result, ensure_ascii=False)

    async def fresh_window(_ctx: ToolContext[Any], raw: str) -> str:
        args = _arguments(raw)
        reason = args.get("reason") if args is not None else None
        result = session.engine.new_context(
            reason if isinstance(reason, str) else "",
            system=session._system,
            tools=session._tools,
            may_use_history=bool(session._may_use_history),
        )
        return json.dumps(result, ensure_ascii=False)

    return [
        FunctionTool(
            name=SESSION_HISTORY,
            description=DESCRIPTION,
            params_json_schema=dict(TOOL_SCHEMA),
            on_invoke_tool=look_back,
            strict_json_schema=False,
        ),
        FunctionTool(
            name=NEW_CONTEXT,
            description=NEW_CONTEXT_DESCRIPTION,
            params_json_schema=dict(NEW_CONTEXT_SCHEMA),
            on_invoke_tool=fresh_window,
            strict_json_schema=False,
        ),
    ]


def _arguments(raw: str) -> dict[str, Any] | None:
    try:
        value = json.loads(raw or "{}")
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _now_ms() -> int:
    return time.time_ns() // 1_000_000
