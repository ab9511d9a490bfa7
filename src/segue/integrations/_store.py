"""The transcript store an integration writes to: the one the user configured — ``store``
(a ``postgresql://`` URL) when given, else the home's ``store.url`` setting, else the home's
JSONL files — exactly as ``segue`` and :func:`segue.open_session` choose it."""

from __future__ import annotations

from segue._history.protocol import TranscriptStore
from segue._settings import load_settings, settings_path
from segue._stores import open_store
from segue._workspace import Layout


def configured_url(layout: Layout, store: str | None) -> str | None:
    if store is not None:
        return store
    url = load_settings(settings_path(layout.home)).get("store.url")
    return url if isinstance(url, str) else None


def configured_store(layout: Layout, store: str | None, *, durable: bool) -> TranscriptStore:
    return open_store(layout, configured_url(layout, store), durable=durable)


def close_store(store: TranscriptStore) -> None:
    """Give back what ``store`` holds (PostgreSQL connections); the JSONL store holds
    nothing between calls."""
    store.close()
