"""Model context limits: a maintained table with a per-model settings override. Pure.

The engine budgets every request against :func:`context_window` (R2, R3, R16), so a wrong
number here is a wrong rollover point. Rules:

* The settings key ``contextWindow.<provider:model>`` wins over the table, always (a server
  configured with a smaller context, a new model, a 1M-token beta the account has enabled).
* The table only holds limits the vendors publish; a model it does not know is a clear
  :class:`~segue._errors.UsageError` asking for the override. Nothing guesses.
* ``openai-compatible:`` servers (Ollama, llama.cpp, vLLM…) choose their own context length
  at launch, so a model name alone says nothing: only the override counts there, except for
  OpenAI model names served through a proxy, which keep their OpenAI limit.

Sources (input context, in tokens), checked against the vendors' model pages:

* OpenAI, platform.openai.com/docs/models/<model>: gpt-4o and gpt-4o-mini 128,000;
  gpt-4-turbo 128,000; gpt-4 8,192; gpt-3.5-turbo 16,385; gpt-4.1, -mini, -nano 1,047,576;
  gpt-4.5-preview 128,000; o1 200,000 (o1-mini 128,000); o3, o3-mini, o3-pro, o4-mini
  200,000; codex-mini-latest 200,000; gpt-5, -mini, -nano (and the gpt-5.x point releases)
  400,000; gpt-oss-120b / -20b 131,072.
* Anthropic, docs.anthropic.com/en/docs/about-claude/models/overview: every Claude 3.x and
  4.x model (Haiku, Sonnet, Opus, dated or alias names) 200,000 by default; the 1M-token
  Sonnet context is an opt-in beta and needs the override.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from segue._errors import UsageError
from segue._providers.keys import CONTEXT_WINDOW_PREFIX
from segue._providers.model_ref import ModelRef

_K = 1000
#: ``(provider, pattern on the lower-cased name, limit)``; first match wins, so more
#: specific names come first (o1-mini before o1, gpt-4o before gpt-4).
TABLE: tuple[tuple[str, re.Pattern[str], int], ...] = tuple(
    (provider, re.compile(pattern), limit)
    for provider, pattern, limit in (
        ("openai", r"(chatgpt-)?gpt-4o(-mini)?([-.:].*)?", 128 * _K),
        ("openai", r"gpt-4\.1(-mini|-nano)?([-.:].*)?", 1_047_576),
        ("openai", r"gpt-4\.5(-preview)?([-.:].*)?", 128 * _K),
        ("openai", r"gpt-4-turbo([-.:].*)?|gpt-4-\d{4}-preview", 128 * _K),
        ("openai", r"gpt-4(-\d{4})?", 8_192),
        ("openai", r"gpt-3\.5-turbo([-.:].*)?", 16_385),
        ("openai", r"gpt-5(\.\d+)?(-mini|-nano|-codex|-pro)?([-.:].*)?", 400 * _K),
        ("openai", r"o1-mini([-.:].*)?", 128 * _K),
        ("openai", r"(o1|o3|o4-mini|o3-mini|o3-pro|codex-mini)([-.:].*)?", 200 * _K),
        ("openai", r"gpt-oss-(120b|20b)([-.:].*)?", 131_072),
        ("anthropic", r"claude-(3|3-5|3-7)-(haiku|sonnet|opus)(-.*)?", 200 * _K),
        ("anthropic", r"claude-(haiku|sonnet|opus)-4(-\d{1,2})?(-\d{8})?", 200 * _K),
    )
)


def table_limit(provider: str, name: str) -> int | None:
    """The published limit of ``provider:name``, or None when the table does not know it.

    ``openai-compatible`` names are looked up as OpenAI names (a proxy serving ``gpt-4o``)
    and by their last ``/`` segment (``openai/gpt-4o`` on a router)."""
    family = "openai" if provider in ("openai-compatible", "openai-responses") else provider
    key = name.lower().rsplit("/", 1)[-1]
    for table_provider, pattern, limit in TABLE:
        if table_provider == family and pattern.fullmatch(key):
            return limit
    return None


def context_window(ref: ModelRef, settings: Mapping[str, Any]) -> int:
    """The limit to budget ``ref`` against: the settings override, else the table.

    ``settings`` is the flat ``key -> value`` view (:attr:`segue._settings.Settings.values`),
    already validated. UsageError, naming the key to set, when neither knows the model.
    """
    key = f"{CONTEXT_WINDOW_PREFIX}{ref}"
    override = settings.get(key)
    if isinstance(override, int) and not isinstance(override, bool):
        return override
    limit = table_limit(ref.provider, ref.name)
    if limit is not None:
        return limit
    why = (
        "an OpenAI-compatible server sets its own context length"
        if ref.provider == "openai-compatible"
        else "segue's model table does not know it"
    )
    head = f"the context window of {ref} is not known ({why}); set it in tokens with "
    raise UsageError(
        head + f"the {key} setting (settings={{{key!r}: <tokens>}} when opening a session)",
        cli=head + f"`segue settings set {key} <tokens>`",
    )
