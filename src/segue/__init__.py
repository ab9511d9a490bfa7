"""segue: an agent harness whose context engine never loses a conversation.

The public surface: rows and their codec, the transcript store, token counting, the
session (turn loop) and what builds it, the session_history tool, policy and settings.
Everything else is internal and may change.

Names are imported on first use (PEP 562), so ``import segue`` and ``segue --help`` stay
fast: ``segue.open_session`` loads the session machinery the first time it is looked up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from segue._lazy import listing, load
from segue._version import __version__

if TYPE_CHECKING:  # what type checkers and IDEs see; at run time, ``_LAZY`` below
    from segue.errors import ContextSignal, RuntimeFailure, SegueError, UsageError
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

#: Public name → the module that defines it. Keep in step with the block above and ``__all__``
#: (tests/test_public_api.py checks all three agree).
_LAZY: dict[str, str] = {
    "ContextSignal": "segue.errors",
    "RuntimeFailure": "segue.errors",
    "SegueError": "segue.errors",
    "UsageError": "segue.errors",
    "HistoryStore": "segue.history",
    "InMemoryStore": "segue.history",
    "TranscriptStore": "segue.history",
    "Part": "segue.messages",
    "Row": "segue.messages",
    "decode_row": "segue.messages",
    "encode_row": "segue.messages",
    "make_row": "segue.messages",
    "resolve_agent": "segue.policy",
    "Provider": "segue.providers.base",
    "StepResult": "segue.providers.base",
    "Usage": "segue.providers.base",
    "create_provider": "segue.providers.registry",
    "ProviderRequest": "segue.providers.request",
    "SessionHistoryTool": "segue.retrieval.tool",
    "Session": "segue.session",
    "SessionConfig": "segue.session",
    "TurnResult": "segue.session",
    "open_session": "segue.session.factory",
    "load_settings": "segue.settings",
    "Count": "segue.tokens",
    "count_request": "segue.tokens",
    "count_text": "segue.tokens",
    "resolve_model": "segue.tokens",
    "Layout": "segue.workspace",
}

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


def __getattr__(name: str) -> object:
    return load(__name__, _LAZY, name)


def __dir__() -> list[str]:
    return listing(globals(), _LAZY)
