"""From a model string to a provider.

* ``scripted:PATH`` — the offline provider (:mod:`segue._providers.scripted`).
* ``openai:`` / ``openai-compatible:`` — :mod:`segue._providers.openai_chat` (Chat
  Completions), except OpenAI models served only by the Responses API.
* ``openai-responses:`` (and those models) — :mod:`segue._providers.openai_responses`.
* ``anthropic:`` — :mod:`segue._providers.anthropic_messages`.

The SDKs are optional extras, imported only when such a model is created; a missing SDK,
key or base URL is a :class:`~segue._errors.UsageError` raised here, before any request. The
model's context window comes from :mod:`segue._providers.limits` (settings override first) and
its encoding from :mod:`segue._tokens.registry`, the one the engine's guards count with.

With the ``fallbackModel`` setting (and a different model), the result is a
:class:`~segue._providers.fallback.FallbackProvider` whose fallback is built only when the
primary has failed: a fallback whose key or SDK is missing must not block every run (the
error, when it is needed, names the setting). Its model string is checked up front, and
its context window is taken up front where that needs no credentials.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, Protocol

from segue._errors import SegueError, UnknownModelError
from segue._providers.base import Provider, RequestCounter
from segue._providers.fallback import Deferred, FallbackProvider
from segue._providers.keys import ENCODING_PREFIX, FALLBACK_SETTING
from segue._providers.limits import context_window
from segue._providers.model_ref import ModelRef, parse_model
from segue._providers.retry import RetryPolicy
from segue._providers.scripted import ScriptedProvider, load_script
from segue._tokens.registry import find_family


class SettingsView(Protocol):
    """What the providers read of the settings (a :class:`segue._settings.Settings` is one):
    the flat ``key -> value`` the file holds. The providers sit below the settings file, so
    they take the values rather than the settings machinery."""

    @property
    def values(self) -> Mapping[str, Any]: ...


class _NoSettings:
    values: Mapping[str, Any] = MappingProxyType({})


def create_provider(
    model: str,
    *,
    counter: RequestCounter | None = None,
    state_dir: Path | None = None,
    cwd: Path | None = None,
    settings: SettingsView | None = None,
    environ: Mapping[str, str] | None = None,
    http_client: object | None = None,
    retry: RetryPolicy | None = None,
) -> Provider:
    """The provider for ``model`` (``provider:name``).

    ``counter`` measures requests for providers that must report usage themselves (the
    scripted one). ``state_dir`` makes a scripted provider's position persist across
    processes (pass e.g. ``SEGUE_HOME/providers``); without it each process starts the script
    from its first response. A relative ``scripted:`` path is taken from ``cwd`` (default:
    the current directory).

    ``settings`` supplies ``openai-compatible.baseUrl``, ``contextWindow.<model>`` and
    ``fallbackModel`` (default: none of them set); ``environ`` the API keys (default:
    ``os.environ``). ``http_client`` is handed to the SDK client (tests pass one with a mock
    transport) and ``retry`` sets the retry policy of API providers.
    """
    settings = settings if settings is not None else _NoSettings()
    environ = environ if environ is not None else os.environ

    def make(name: str) -> Provider:
        return _create_one(parse_model(name), counter=counter, state_dir=state_dir, cwd=cwd,
                           settings=settings, environ=environ, http_client=http_client,
                           retry=retry)

    primary = make(model)
    fallback = settings.values.get(FALLBACK_SETTING)
    if isinstance(fallback, str) and fallback != model:
        ref = parse_model(fallback)  # a malformed setting is a usage error now
        return FallbackProvider(
            primary,
            Deferred(str(ref), lambda: make(fallback),
                     context_window=known_window(ref, settings, scripts=False)),
        )
    return primary


def known_window(
    ref: ModelRef, settings: SettingsView, *, scripts: bool = True, cwd: Path | None = None
) -> int | None:
    """``ref``'s context window where it is known without credentials: the limits table, a
    ``contextWindow`` setting, or (with ``scripts``) a readable script's ``contextWindow``
    (a relative path from ``cwd``); None where nothing says."""
    try:
        if ref.provider == "scripted":
            if not scripts:
                return None
            path = Path(ref.name)
            if not path.is_absolute():
                path = (cwd if cwd is not None else Path.cwd()) / path
            return load_script(path)[0].context_window
        return context_window(ref, settings.values)
    except SegueError:
        return None


def _create_one(
    ref: ModelRef,
    *,
    counter: RequestCounter | None,
    state_dir: Path | None,
    cwd: Path | None,
    settings: SettingsView,
    environ: Mapping[str, str],
    http_client: object | None,
    retry: RetryPolicy | None,
) -> Provider:
    model = str(ref)
    if ref.provider == "scripted":
        path = Path(ref.name)
        if not path.is_absolute():
            path = (cwd if cwd is not None else Path.cwd()) / path
        return ScriptedProvider.from_file(path, counter=counter, state_dir=state_dir,
                                          model=model)
    window = context_window(ref, settings.values)
    encoding = model_encoding(ref, settings.values)
    if ref.provider == "openai-responses" or (
            ref.provider == "openai" and _responses_only(ref.name)):
        from segue._providers import openai_responses

        return openai_responses.build(model, environ=environ, context_window=window,
                                      encoding=encoding, http_client=http_client, retry=retry)
    if ref.provider == "anthropic":
        from segue._providers import anthropic_messages

        return anthropic_messages.build(model, environ=environ, context_window=window,
                                        encoding=encoding, http_client=http_client,
                                        retry=retry, settings=settings.values)
    from segue._providers import openai_chat

    return openai_chat.build(model, settings=settings.values, environ=environ,
                             context_window=window, encoding=encoding,
                             http_client=http_client, retry=retry)


def _responses_only(name: str) -> bool:
    from segue._providers.openai_responses import responses_only

    return responses_only(name)


def model_encoding(ref: ModelRef, settings: Mapping[str, Any] | None = None) -> str:
    """The encoding the engine counts ``ref`` with (R17: never a characters-per-token guess):
    the ``encoding.<provider:model>`` setting where the user named one, else its family's."""
    override = (settings or {}).get(f"{ENCODING_PREFIX}{ref}")
    if isinstance(override, str):
        return override
    family = find_family(str(ref))
    if family is None:
        why = (
            "segue knows no tokenizer for this model family, and its size guards count with "
            "the model's real encoding; known families: OpenAI, Claude, Gemini, "
            "DeepSeek, Qwen, Llama, Mistral. Name one: "
        )
        key = f"{ENCODING_PREFIX}{ref}"
        raise UnknownModelError(
            str(ref),
            why + f"the {key} setting (settings={{{key!r}: 'o200k_base'}} when opening a "
            "session)",
            cli_hint=why + f"segue settings set {key} o200k_base",
        )
    return family.encoding
