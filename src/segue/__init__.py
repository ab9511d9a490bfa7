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
    from segue.errors import (
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
    from segue.events import (
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
    from segue.history import HistoryStore, InMemoryStore, MaintainedStore, TranscriptStore
    from segue.messages import Part, Row, decode_row, encode_row, make_row
    from segue.policy import resolve_agent
    from segue.policy.approval import ApprovalMode
    from segue.providers.base import Provider, StepResult, Usage
    from segue.providers.registry import create_provider
    from segue.providers.request import ProviderRequest
    from segue.retrieval.tool import SessionHistoryTool
    from segue.session import Session, SessionConfig, TurnResult
    from segue.session.stream import TurnStream
    from segue.settings import load_settings
    from segue.tokens import Count, count_request, count_text, resolve_model
    from segue.tools.gate import Answer, ApprovalGate, ApprovalRequest
    from segue.workspace import Layout

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
    "ContextSignal": "segue.errors",
    "ContextOverflowError": "segue.errors",
    "LockTimeout": "segue.errors",
    "PluginError": "segue.errors",
    "ProviderAuthError": "segue.errors",
    "ProviderError": "segue.errors",
    "RowDecodeError": "segue.errors",
    "StoreError": "segue.errors",
    "TransientProviderError": "segue.errors",
    "TurnCancelled": "segue.errors",
    "TurnPaused": "segue.errors",
    "UnknownModelError": "segue.errors",
    "WorkspaceNotFound": "segue.errors",
    "RuntimeFailure": "segue.errors",
    "SegueError": "segue.errors",
    "SettingsError": "segue.errors",
    "UsageError": "segue.errors",
    "AssistantText": "segue.events",
    "Compacted": "segue.events",
    "Event": "segue.events",
    "EventSink": "segue.events",
    "Notice": "segue.events",
    "RolledOver": "segue.events",
    "StepUsage": "segue.events",
    "TaskFinished": "segue.events",
    "TaskStarted": "segue.events",
    "ToolFinished": "segue.events",
    "ToolStarted": "segue.events",
    "Warned": "segue.events",
    "HistoryStore": "segue.history",
    "InMemoryStore": "segue.history",
    "MaintainedStore": "segue.history",
    "TranscriptStore": "segue.history",
    "Part": "segue.messages",
    "Row": "segue.messages",
    "decode_row": "segue.messages",
    "encode_row": "segue.messages",
    "make_row": "segue.messages",
    "resolve_agent": "segue.policy",
    "ApprovalMode": "segue.policy.approval",
    "Provider": "segue.providers.base",
    "StepResult": "segue.providers.base",
    "Usage": "segue.providers.base",
    "create_provider": "segue.providers.registry",
    "ProviderRequest": "segue.providers.request",
    "SessionHistoryTool": "segue.retrieval.tool",
    "Session": "segue.session",
    "SessionConfig": "segue.session",
    "TurnResult": "segue.session",
    "TurnStream": "segue.session.stream",
    "load_settings": "segue.settings",
    "Count": "segue.tokens",
    "count_request": "segue.tokens",
    "count_text": "segue.tokens",
    "resolve_model": "segue.tokens",
    "Answer": "segue.tools.gate",
    "ApprovalGate": "segue.tools.gate",
    "ApprovalRequest": "segue.tools.gate",
    "Layout": "segue.workspace",
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
