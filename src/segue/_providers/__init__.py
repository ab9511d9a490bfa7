"""Providers: the Provider protocol, request values, and the offline scripted provider.

* :mod:`segue._providers.request` — the request (system, rows, tools) and the neutral message
  view adapters translate (pure values).
* :mod:`segue._providers.base` — the Provider protocol, StepResult, Usage, stream events.
* :mod:`segue._providers.script` / :mod:`segue._providers.scripted` — the scripted provider.
* :mod:`segue._providers.model_ref` / :mod:`segue._providers.registry` — model strings.

The package exports only the pure protocol and values; :mod:`segue._providers.keys` declares
the settings the providers read (``segue._settings`` assembles them), and the modules that do
I/O (``registry``, ``scripted``) are imported by name where they are used.
"""

from typing import TYPE_CHECKING

from segue._lazy import listing, load

if TYPE_CHECKING:  # what type checkers see; at run time each name loads on first use
    from segue._providers.base import (
        EventSink,
        Provider,
        RequestCounter,
        StepResult,
        StreamEvent,
        TextDelta,
        ToolCallEvent,
        Usage,
    )
    from segue._providers.model_ref import PROVIDERS, ModelRef, parse_model
    from segue._providers.request import (
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

#: Public name → its module (reading a model string from the settings needs only model_ref).
_LAZY: dict[str, str] = {
    "EventSink": "segue._providers.base",
    "Provider": "segue._providers.base",
    "RequestCounter": "segue._providers.base",
    "StepResult": "segue._providers.base",
    "StreamEvent": "segue._providers.base",
    "TextDelta": "segue._providers.base",
    "ToolCallEvent": "segue._providers.base",
    "Usage": "segue._providers.base",
    "PROVIDERS": "segue._providers.model_ref",
    "ModelRef": "segue._providers.model_ref",
    "parse_model": "segue._providers.model_ref",
    "Block": "segue._providers.request",
    "Media": "segue._providers.request",
    "Message": "segue._providers.request",
    "ProviderRequest": "segue._providers.request",
    "Text": "segue._providers.request",
    "ToolCall": "segue._providers.request",
    "ToolResult": "segue._providers.request",
    "request_from_obj": "segue._providers.request",
    "request_to_obj": "segue._providers.request",
    "to_messages": "segue._providers.request",
}

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


def __getattr__(name: str) -> object:
    return load(__name__, _LAZY, name)


def __dir__() -> list[str]:
    return listing(globals(), _LAZY)
