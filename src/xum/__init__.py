"""xum: an agent harness whose context engine never loses a conversation.

The public surface: rows and their codec, the transcript store, token counting, the
session (turn loop) and what builds it, the session_history tool, policy and settings.
Everything else is internal and may change.
"""

from xum.errors import (
    ContextSignal,
    RuntimeFailure,
    UsageError,
    XumError,
)
from xum.history import HistoryStore, InMemoryStore, TranscriptStore
from xum.messages import Part, Row, decode_row, encode_row, make_row
from xum.policy import resolve_agent
from xum.providers.base import Provider, StepResult, Usage
from xum.providers.registry import create_provider
from xum.providers.request import ProviderRequest
from xum.retrieval.tool import SessionHistoryTool
from xum.session import Session, SessionConfig, TurnResult
from xum.session.factory import open_session
from xum.settings import load_settings
from xum.tokens import Count, count_request, count_text, resolve_model
from xum.workspace import Layout

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
    "Session",
    "SessionConfig",
    "SessionHistoryTool",
    "StepResult",
    "TranscriptStore",
    "TurnResult",
    "Usage",
    "UsageError",
    "XumError",
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
