"""The settings the providers read: the models, the OpenAI-compatible server, the Anthropic
cache lifetime, and the per-model context window and encoding (declared here, assembled by
:mod:`segue._settings`). Light on purpose: reading a settings file loads this module, and the
checks import what they need when they run."""

from __future__ import annotations

from typing import Any

from segue._errors import SettingsError, UsageError
from segue._keyspec import FamilySpec, KeySpec, http_url, one_of, tokens

#: The model tried when the chosen one fails (:mod:`segue._providers.fallback`).
FALLBACK_SETTING = "fallbackModel"
#: ``contextWindow.<provider:model>``: the model's context limit in tokens, overriding the
#: table in :mod:`segue._providers.limits` (required for models the table does not know).
CONTEXT_WINDOW_PREFIX = "contextWindow."
#: ``encoding.<provider:model>``: the bundled encoding to count a model with that no known
#: family covers (a local fine-tune behind an OpenAI-compatible server).
ENCODING_PREFIX = "encoding."


def model_string(key: str, value: Any) -> str:
    """A ``provider:name`` model string (the value of ``model`` and ``fallbackModel``)."""
    if not isinstance(value, str):
        raise SettingsError(f"{key} must be a model string provider:name", key=key)
    from segue._providers.model_ref import parse_model

    try:
        parse_model(value)
    except UsageError as exc:
        raise SettingsError(f"{key}: {exc.message}", key=key) from None
    return value


def _encoding(key: str, value: Any) -> str:
    from segue._tokens.encodings import ENCODING_NAMES

    if value not in ENCODING_NAMES:
        raise SettingsError(f"{key} must be one of {', '.join(ENCODING_NAMES)}", key=key)
    return str(value)


def _encoding_help() -> str:
    # Built when asked: the encodings' names come from the token counter, which start-up
    # does not load.
    from segue._tokens.encodings import ENCODING_NAMES

    return "the bundled encoding that counts that model: " + " | ".join(ENCODING_NAMES)


KEYS: dict[str, KeySpec] = {
    "model": KeySpec(model_string, None, "default model (provider:name) for run and chat"),
    "openai-compatible.baseUrl": KeySpec(
        http_url, None, "base URL of the OpenAI-compatible server"),
    FALLBACK_SETTING: KeySpec(
        model_string, None, "model (provider:name) tried when the chosen one fails"),
    "anthropic.cacheTtl": KeySpec(
        one_of(("5m", "1h")), "5m",
        "Anthropic prompt-cache lifetime: 5m (writes 1.25x) or 1h (writes 2x; outlasts pauses)"),
}

FAMILIES: dict[str, FamilySpec] = {
    CONTEXT_WINDOW_PREFIX: FamilySpec(
        tokens, lambda: "that model's context window in tokens (>= 1024; needed for a model "
        "segue does not know)"),
    ENCODING_PREFIX: FamilySpec(_encoding, _encoding_help),
}
