"""What the SDK-backed providers share: the model they were made for, its limits, the
bounded retry policy (the SDKs' own retries are off) around one step, how to install a
missing SDK, the API key and client options, and the SDK errors (and the transport errors
an SDK lets through while a stream is read) as segue's provider errors."""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from segue._errors import MissingSetup, ProviderError
from segue._extras import install_hint
from segue._providers.base import EventSink, StepResult, TextDelta, ToolCallEvent
from segue._providers.failures import ApiFailure, classify, error_fields
from segue._providers.request import ProviderRequest
from segue._providers.retry import RetryPolicy, run_with_retries


def missing_sdk(model: str, sdk: str, extra: str) -> MissingSetup:
    return MissingSetup(f"model {model!r} needs the {sdk} SDK: {install_hint(extra)}")


def api_key(environ: Mapping[str, str], env: str, *, model: str, vendor: str, example: str) -> str:
    """The API key in ``env``; MissingSetup (naming ``env``) when it is unset or blank."""
    key = environ.get(env, "").strip()
    if not key:
        raise MissingSetup(f"model {model!r} needs an {vendor} API key: export {env}={example}")
    return key


def client_options(key: str, base_url: str | None, http_client: object | None) -> dict[str, Any]:
    """The SDK client's options; its own retries are off (retries are counted once, by
    :mod:`segue._providers.retry`)."""
    options: dict[str, Any] = {"api_key": key, "base_url": base_url, "max_retries": 0}
    if http_client is not None:
        options["http_client"] = http_client
    return options


def transport_errors() -> tuple[type[BaseException], ...]:
    """The HTTP client's transport errors (a dropped connection, a read timeout). The SDKs
    wrap these when a request is sent, but the Anthropic SDK lets them escape while a stream
    is being read, so every adapter catches them too. Which client the SDK uses is found at
    run time (``httpx2`` in current releases, ``httpx`` before)."""
    found: list[type[BaseException]] = []
    for name in ("httpx2", "httpx"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        error = getattr(module, "TransportError", None)
        if isinstance(error, type) and issubclass(error, BaseException):
            found.append(error)
    return tuple(found)


def stream_error(label: str, exc: Any, *, key_env: str | None) -> ProviderError:
    """An error event inside a 200 stream (the SDK's ``APIError`` with the event's body)."""
    error_type, code, message = error_fields(exc.body)
    return classify(ApiFailure(label, message or exc.message, None, error_type, code,
                               in_stream=True), key_env=key_env)


def dropped(label: str, exc: BaseException, *, key_env: str | None) -> ProviderError:
    """A connection that dropped while the stream was read (one of :func:`transport_errors`)."""
    return classify(ApiFailure(label, f"{type(exc).__name__}: {exc}", connection=True),
                    key_env=key_env)


def feed_all(stream: Any, feed: Callable[[Any], None]) -> None:
    """Read an SDK stream to its end, each event to ``feed``; the stream is closed after."""
    with stream:
        for event in stream:
            feed(event)


@contextmanager
def sdk_errors(sdk: Any, label: str, *, key_env: str | None) -> Iterator[None]:
    """The errors of a request and its stream as segue's :class:`ProviderError`, for the SDKs
    that share one error hierarchy (``anthropic``, ``openai``: ``APIStatusError``,
    ``APIConnectionError``, ``APIError``)."""
    try:
        yield
    except sdk.APIStatusError as exc:
        error_type, code, message = error_fields(exc.body)
        # An ``event: error`` inside a 200 stream arrives as a status error with the
        # stream's 200: the status and its headers say nothing about the failure.
        in_stream = exc.status_code == 200
        raise classify(
            ApiFailure(label, message or exc.message,
                       None if in_stream else exc.status_code, error_type, code,
                       {} if in_stream else dict(exc.response.headers),
                       in_stream=in_stream),
            key_env=key_env,
        ) from None
    except sdk.APIConnectionError as exc:
        raise classify(ApiFailure(label, str(exc), connection=True), key_env=key_env) from None
    except sdk.APIError as exc:
        raise stream_error(label, exc, key_env=key_env) from None
    except transport_errors() as exc:
        # The SDK does not wrap read errors while streaming: a dropped connection arrives
        # as the HTTP client's own exception.
        raise dropped(label, exc, key_env=key_env) from None


class SdkProvider(ABC):
    """A provider behind a vendor SDK: :meth:`params` translates a request once, and
    :meth:`_attempt` sends it and reads the stream, as often as the retry policy allows (a
    step that already streamed something is not retried)."""

    def __init__(
        self,
        model: str,
        *,
        context_window: int,
        encoding: str,
        retry: RetryPolicy | None = None,
    ) -> None:
        self._model = model
        #: the name the API knows the model by (``openai:gpt-4o`` → ``gpt-4o``)
        self._name = model.partition(":")[2]
        self._context_window = context_window
        self._encoding = encoding
        self.retry = retry if retry is not None else RetryPolicy()

    @property
    def model(self) -> str:
        return self._model

    @property
    def context_window(self) -> int:
        return self._context_window

    @property
    def encoding(self) -> str:
        return self._encoding

    @abstractmethod
    def params(self, request: ProviderRequest) -> dict[str, Any]:
        """The request's body as the SDK takes it."""

    @abstractmethod
    def _attempt(self, params: dict[str, Any], emit: EventSink) -> StepResult:
        """One request with ``params``, its stream fed to ``emit`` as it comes."""

    def step(self, request: ProviderRequest, *, on_event: EventSink | None = None) -> StepResult:
        params = self.params(request)  # translated once: every retry sends the same body
        streamed = False

        def emit(event: TextDelta | ToolCallEvent) -> None:
            nonlocal streamed
            streamed = True
            if on_event is not None:
                on_event(event)

        return run_with_retries(lambda: self._attempt(params, emit), self.retry,
                                streamed=lambda: streamed)
