"""segue: an agent harness whose context engine never loses a conversation.

The public surface: opening a session (``open_session``) and reading its transcript
(``open_history``), the events a turn reports, approval of tool calls, rows and their codec,
the transcript store, token counting, the session_history tool, policy and settings.
Everything else is internal and may change.
"""

from segue._version import __version__
from segue.api import (
    ApproverLike,
    History,
    HistoryItem,
    HistoryWindow,
    ModelHistory,
    NotFound,
    SearchHit,
    open_history,
    open_session,
)
from segue.errors import (
    ContextSignal,
    RuntimeFailure,
    SegueError,
    SettingsError,
    UsageError,
)
from segue.events import (
    AssistantText,
    Compacted,
    Event,
    EventSink,
    Notice,
    RolledOver,
    StepUsage,
    ToolFinished,
    ToolStarted,
    Warned,
)
from segue.history import HistoryStore, InMemoryStore, TranscriptStore
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

__all__ = [
    "Answer",
    "ApprovalGate",
    "ApprovalMode",
    "ApprovalRequest",
    "ApproverLike",
    "AssistantText",
    "Compacted",
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
    "ModelHistory",
    "NotFound",
    "Notice",
    "Part",
    "Provider",
    "ProviderRequest",
    "RolledOver",
    "Row",
    "RuntimeFailure",
    "SearchHit",
    "SegueError",
    "Session",
    "SessionConfig",
    "SessionHistoryTool",
    "SettingsError",
    "StepResult",
    "StepUsage",
    "ToolFinished",
    "ToolStarted",
    "TranscriptStore",
    "TurnResult",
    "TurnStream",
    "Usage",
    "UsageError",
    "Warned",
    "__version__",
    "count_request",
    "count_text",
    "create_provider",
    "decode_row",
    "encode_row",
    "load_settings",
    "make_row",
    "open_history",
    "open_session",
    "resolve_agent",
    "resolve_model",
]
