"""Model strings: ``provider:name`` (SPEC.md §5). Pure.

Providers: ``openai``, ``openai-responses`` (OpenAI's Responses API), ``anthropic``,
``openai-compatible`` (a local or third-party server with a base URL) and ``scripted`` (the
name is the path of a JSON script). The name is kept as
written, colons included (``scripted:C:/x.json``, ``openai-compatible:org/model:tag``).
"""

from __future__ import annotations

from dataclasses import dataclass

from segue._errors import UnknownModelError

PROVIDERS: tuple[str, ...] = (
    "openai", "openai-responses", "anthropic", "openai-compatible", "scripted")


@dataclass(frozen=True)
class ModelRef:
    provider: str
    name: str

    def __str__(self) -> str:
        return f"{self.provider}:{self.name}"


def parse_model(model: str) -> ModelRef:
    """Split and check a model string; UnknownModelError names the accepted providers."""
    provider, sep, name = model.partition(":")
    choices = ", ".join(f"{p}:" for p in PROVIDERS)
    if not sep or not provider:
        raise UnknownModelError(model, f"write it as provider:name with one of {choices}")
    if provider not in PROVIDERS:
        raise UnknownModelError(model, f"unknown provider {provider!r}; use one of {choices}")
    if not name.strip() or name != name.strip():
        raise UnknownModelError(model, "the model name after the provider must not be empty "
                                       "or start or end with spaces")
    return ModelRef(provider, name)
