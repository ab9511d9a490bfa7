"""The walk over every row that a person's words search falls back to, made visible to tests:
made to fail, so that what answered is an index, or counted, so that a test sees it ran."""

from __future__ import annotations

import pytest

from segue._retrieval import people_words


def no_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the walk over every row fail: what answers then is the store's index."""

    def walked(*_args: object) -> None:
        raise AssertionError("walked every row although the index can answer")

    monkeypatch.setattr(people_words, "_items", walked)


def counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the walks over every row (each still answers): one entry per walk."""
    walks: list[int] = []
    walk = people_words._items

    def counted(entries: people_words.Entries) -> object:
        walks.append(1)
        return walk(entries)

    monkeypatch.setattr(people_words, "_items", counted)
    return walks
