"""segue: an agent harness whose context engine never loses a conversation.

The public surface: rows and their codec, the transcript store, token counting, the
session (turn loop) and what builds it, the session_history tool, policy and settings.
Everything else is internal and may change.
"""

from segue._version import __version__
from segue.errors import (
    ContextSignal,
    RuntimeFailure,
    SegueError,
    UsageError,
)
from segue.history import HistoryStore, InMemoryStore, TranscriptStore
from segue.messages import Part, Row, decode_row, encode_row, make_row
from segue.policy import resolve_agent
from segue.providers.base import Provider, StepResult, Usage
from segue.providers.registry import create_provider
from segue.providers.request import ProviderRequest
from segue.retrieval.tool import SessionHistoryTool
from segue.session import Session, SessionConfig, TurnResult
from segue.session.factory import open_session
from segue.settings import load_settings
from segue.tokens import Count, count_request, count_text, resolve_model
from segue.workspace import Layout

__all__ = [
    "ContextSignal",
    "Count",
    "HistoryStore",
    "InMemoryStore",
    "Layout",
    "Part",
    "Provider",
    "ProviderRequest",
    "Row",
    "RuntimeFailure",
    "SegueError",
    "Session",
    "SessionConfig",
    "SessionHistoryTool",
    "StepResult",
    "TranscriptStore",
    "TurnResult",
    "Usage",
    "UsageError",
    "__version__",
    "count_request",
    "count_text",
    "create_provider",
    "decode_row",
    "encode_row",
    "load_settings",
    "make_row",
    "open_session",
    "resolve_agent",
    "resolve_model",
]
