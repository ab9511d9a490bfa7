"""Providers: the Provider protocol, request values, and the offline scripted provider.

* :mod:`segue.providers.request` — the request (system, rows, tools) and the neutral message
  view adapters translate (pure values).
* :mod:`segue.providers.base` — the Provider protocol, StepResult, Usage, stream events.
* :mod:`segue.providers.script` / :mod:`segue.providers.scripted` — the scripted provider.
* :mod:`segue.providers.model_ref` / :mod:`segue.providers.registry` — model strings.

The package exports only the pure protocol and values: ``segue.settings`` imports model
strings from here, and the scripted provider writes its state with ``segue.settings``, so the
modules that do I/O (``registry``, ``scripted``) are imported by name where they are used.
"""

from segue.providers.base import (
    EventSink,
    Provider,
    RequestCounter,
    StepResult,
    StreamEvent,
    TextDelta,
    ToolCallEvent,
    Usage,
)
from segue.providers.model_ref import PROVIDERS, ModelRef, parse_model
from segue.providers.request import (
    Block,
    Media,
    Message,
    ProviderRequest,
    Text,
    ToolCall,
    ToolResult,
    request_from_obj,
    request_to_obj,
    to_messages,
)

__all__ = [
    "PROVIDERS",
    "Block",
    "EventSink",
    "Media",
    "Message",
    "ModelRef",
    "Provider",
    "ProviderRequest",
    "RequestCounter",
    "StepResult",
    "StreamEvent",
    "Text",
    "TextDelta",
    "ToolCall",
    "ToolCallEvent",
    "ToolResult",
    "Usage",
    "parse_model",
    "request_from_obj",
    "request_to_obj",
    "to_messages",
]
