"""Providers: the Provider protocol, request values, and the offline scripted provider.

* :mod:`segue.providers.request` — the request (system, rows, tools) and the neutral message
  view adapters translate (pure values).
* :mod:`segue.providers.base` — the Provider protocol, StepResult, Usage, stream events.
* :mod:`segue.providers.script` / :mod:`segue.providers.scripted` — the scripted provider.
* :mod:`segue.providers.model_ref` / :mod:`segue.providers.registry` — model strings.

The package exports only the pure protocol and values; :mod:`segue.providers.keys` declares
the settings the providers read (``segue.settings`` assembles them), and the modules that do
I/O (``registry``, ``scripted``) are imported by name where they are used.
"""

from typing import TYPE_CHECKING

from segue._lazy import listing, load

if TYPE_CHECKING:  # what type checkers see; at run time each name loads on first use
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

#: Public name → its module (reading a model string from the settings needs only model_ref).
_LAZY: dict[str, str] = {
    "EventSink": "segue.providers.base",
    "Provider": "segue.providers.base",
    "RequestCounter": "segue.providers.base",
    "StepResult": "segue.providers.base",
    "StreamEvent": "segue.providers.base",
    "TextDelta": "segue.providers.base",
    "ToolCallEvent": "segue.providers.base",
    "Usage": "segue.providers.base",
    "PROVIDERS": "segue.providers.model_ref",
    "ModelRef": "segue.providers.model_ref",
    "parse_model": "segue.providers.model_ref",
    "Block": "segue.providers.request",
    "Media": "segue.providers.request",
    "Message": "segue.providers.request",
    "ProviderRequest": "segue.providers.request",
    "Text": "segue.providers.request",
    "ToolCall": "segue.providers.request",
    "ToolResult": "segue.providers.request",
    "request_from_obj": "segue.providers.request",
    "request_to_obj": "segue.providers.request",
    "to_messages": "segue.providers.request",
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
