"""segue: an agent harness whose context engine never loses a conversation.

The public surface: opening a session (``open_session``) and reading its transcript
(``open_history``), the events a turn reports, approval of tool calls, rows and their codec,
the transcript store, token counting, the session_history tool, policy and settings.
Everything else is internal and may change.

Names are imported on first use (PEP 562), so ``import segue`` and ``segue --help`` stay
fast: ``segue.open_session`` loads the session machinery the first time it is looked up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from segue._lazy import listing, load
from segue._version import __version__

if TYPE_CHECKING:  # what type checkers and IDEs see; at run time, ``_LAZY`` below
    from segue._errors import (
        ContextOverflowError,
        ContextSignal,
        LockTimeout,
        PluginError,
        ProviderAuthError,
        ProviderError,
        RowDecodeError,
        RuntimeFailure,
        SegueError,
        SettingsError,
        StoreError,
        TransientProviderError,
        TurnCancelled,
        TurnPaused,
        UnknownModelError,
        UsageError,
        WorkspaceNotFound,
    )
    from segue._events import (
        AssistantText,
        Compacted,
        Event,
        EventSink,
        Notice,
        RolledOver,
        StepUsage,
        TaskFinished,
        TaskStarted,
        ToolFinished,
        ToolStarted,
        Warned,
    )
    from segue._history import HistoryStore, InMemoryStore, MaintainedStore, TranscriptStore
    from segue._messages import Part, Row, decode_row, encode_row, make_row
    from segue._policy import resolve_agent
    from segue._policy.approval import ApprovalMode
    from segue._providers.base import Provider, StepResult, Usage
    from segue._providers.registry import create_provider
    from segue._providers.request import ProviderRequest
    from segue._retrieval.tool import SessionHistoryTool
    from segue._session import Session, SessionConfig, TurnResult
    from segue._session.stream import TurnStream
    from segue._settings import load_settings
    from segue._tokens import Count, count_request, count_text, resolve_model
    from segue._tools.gate import Answer, ApprovalGate, ApprovalRequest
    from segue._workspace import Layout
    from segue.api import (
        ApproverLike,
        History,
        HistoryItem,
        HistoryWindow,
        ModelHistory,
        NotFound,
        SearchHit,
        TaskInfo,
        list_tasks,
        open_history,
        open_session,
        open_store,
    )

#: Public name → the module that defines it. Keep in step with the block above and ``__all__``
#: (tests/test_public_api.py checks all three agree).
_LAZY: dict[str, str] = {
    "ApproverLike": "segue.api",
    "History": "segue.api",
    "HistoryItem": "segue.api",
    "HistoryWindow": "segue.api",
    "ModelHistory": "segue.api",
    "NotFound": "segue.api",
    "SearchHit": "segue.api",
    "TaskInfo": "segue.api",
    "list_tasks": "segue.api",
    "open_history": "segue.api",
    "open_session": "segue.api",
    "open_store": "segue.api",
    "ContextSignal": "segue._errors",
    "ContextOverflowError": "segue._errors",
    "LockTimeout": "segue._errors",
    "PluginError": "segue._errors",
    "ProviderAuthError": "segue._errors",
    "ProviderError": "segue._errors",
    "RowDecodeError": "segue._errors",
    "StoreError": "segue._errors",
    "TransientProviderError": "segue._errors",
    "TurnCancelled": "segue._errors",
    "TurnPaused": "segue._errors",
    "UnknownModelError": "segue._errors",
    "WorkspaceNotFound": "segue._errors",
    "RuntimeFailure": "segue._errors",
    "SegueError": "segue._errors",
    "SettingsError": "segue._errors",
    "UsageError": "segue._errors",
    "AssistantText": "segue._events",
    "Compacted": "segue._events",
    "Event": "segue._events",
    "EventSink": "segue._events",
    "Notice": "segue._events",
    "RolledOver": "segue._events",
    "StepUsage": "segue._events",
    "TaskFinished": "segue._events",
    "TaskStarted": "segue._events",
    "ToolFinished": "segue._events",
    "ToolStarted": "segue._events",
    "Warned": "segue._events",
    "HistoryStore": "segue._history",
    "InMemoryStore": "segue._history",
    "MaintainedStore": "segue._history",
    "TranscriptStore": "segue._history",
    "Part": "segue._messages",
    "Row": "segue._messages",
    "decode_row": "segue._messages",
    "encode_row": "segue._messages",
    "make_row": "segue._messages",
    "resolve_agent": "segue._policy",
    "ApprovalMode": "segue._policy.approval",
    "Provider": "segue._providers.base",
    "StepResult": "segue._providers.base",
    "Usage": "segue._providers.base",
    "create_provider": "segue._providers.registry",
    "ProviderRequest": "segue._providers.request",
    "SessionHistoryTool": "segue._retrieval.tool",
    "Session": "segue._session",
    "SessionConfig": "segue._session",
    "TurnResult": "segue._session",
    "TurnStream": "segue._session.stream",
    "load_settings": "segue._settings",
    "Count": "segue._tokens",
    "count_request": "segue._tokens",
    "count_text": "segue._tokens",
    "resolve_model": "segue._tokens",
    "Answer": "segue._tools.gate",
    "ApprovalGate": "segue._tools.gate",
    "ApprovalRequest": "segue._tools.gate",
    "Layout": "segue._workspace",
}

__all__ = [
    "Answer",
    "ApprovalGate",
    "ApprovalMode",
    "ApprovalRequest",
    "ApproverLike",
    "AssistantText",
    "Compacted",
    "ContextOverflowError",
    "ContextSignal",
    "Count",
    "Event",
    "EventSink",
    "History",
    "HistoryItem",
    "HistoryStore",
    "HistoryWindow",
    "InMemoryStore",
    "Layout",
    "LockTimeout",
    "MaintainedStore",
    "ModelHistory",
    "NotFound",
    "Notice",
    "Part",
    "PluginError",
    "Provider",
    "ProviderAuthError",
    "ProviderError",
    "ProviderRequest",
    "RolledOver",
    "Row",
    "RowDecodeError",
    "RuntimeFailure",
    "SearchHit",
    "SegueError",
    "Session",
    "SessionConfig",
    "SessionHistoryTool",
    "SettingsError",
    "StepResult",
    "StepUsage",
    "StoreError",
    "TaskFinished",
    "TaskInfo",
    "TaskStarted",
    "ToolFinished",
    "ToolStarted",
    "TranscriptStore",
    "TransientProviderError",
    "TurnCancelled",
    "TurnPaused",
    "TurnResult",
    "TurnStream",
    "UnknownModelError",
    "Usage",
    "UsageError",
    "Warned",
    "WorkspaceNotFound",
    "__version__",
    "count_request",
    "count_text",
    "create_provider",
    "decode_row",
    "encode_row",
    "list_tasks",
    "load_settings",
    "make_row",
    "open_history",
    "open_session",
    "open_store",
    "resolve_agent",
    "resolve_model",
]


def __getattr__(name: str) -> object:
    return load(__name__, _LAZY, name)


def __dir__() -> list[str]:
    return listing(globals(), _LAZY)
