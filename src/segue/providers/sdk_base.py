"""What the SDK-backed providers share: the model they were made for, its limits, and the
bounded retry policy (the SDKs' own retries are off)."""

from __future__ import annotations

from segue.providers.retry import RetryPolicy


class SdkProvider:
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
