"""The three stores behind one seam, opened as a library caller opens them: the JSONL files
(``segue.open_store``), the in-memory store (``segue.InMemoryStore``) and PostgreSQL
(``segue.open_store(..., store=URL)`` on the run's throwaway cluster, see
tests/postgres/cluster.py: skipped locally without a server, a failure in CI)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import segue
from tests.postgres.cluster import pg_url

__all__ = ["KINDS", "Stores", "pg_url"]

KINDS = ("jsonl", "memory", "postgresql")


@dataclass
class Stores:
    """Opens workspaces' stores of one kind; every store opened is closed at the end."""

    kind: str
    home: Path
    url: str | None
    opened: list[segue.TranscriptStore] = field(default_factory=list)
    memory: dict[str, segue.InMemoryStore] = field(default_factory=dict)

    def open(self, workspace: str = "ws") -> segue.TranscriptStore:
        """The workspace's store; opening it again reads the same transcript."""
        store: segue.TranscriptStore
        if self.kind == "memory":
            store = self.memory.setdefault(workspace, segue.InMemoryStore(workspace))
        else:
            store = segue.open_store(workspace, home=self.home, store=self.url, durable=False)
        self.opened.append(store)
        return store

    def history(self, workspace: str = "ws", *, include_cleared: bool = False) -> segue.History:
        """``open_history`` of the workspace (the in-memory store has no home to find it
        in: its History is made over the store itself)."""
        if self.kind == "memory":
            return segue.History(segue.Layout(self.home, workspace), self.open(workspace),
                                 include_cleared=include_cleared)
        return segue.open_history(workspace, home=self.home, store=self.url,
                                  include_cleared=include_cleared)

    def close(self) -> None:
        for store in self.opened:
            store.close()


def make_stores(request: pytest.FixtureRequest, kind: str, home: Path) -> Iterator[Stores]:
    url = request.getfixturevalue("pg_url") if kind == "postgresql" else None
    stores = Stores(kind, home, url)
    try:
        yield stores
    finally:
        stores.close()


@pytest.fixture(params=KINDS)
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Stores]:
    """One kind of store (each test runs once per kind)."""
    home = tmp_path / "home"
    home.mkdir()
    yield from make_stores(request, request.param, home)


@pytest.fixture
def every_kind(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dict[str, Stores]]:
    """All three kinds at once, each with a home of its own (differential tests)."""
    made: dict[str, Stores] = {}
    gens: list[Iterator[Stores]] = []
    for kind in KINDS:
        home = tmp_path / kind
        home.mkdir()
        gen = make_stores(request, kind, home)
        gens.append(gen)
        made[kind] = next(gen)
    yield made
    for gen in gens:
        next(gen, None)


Scenario = Callable[[Stores], object]


def same_everywhere(every: dict[str, Stores], scenario: Scenario) -> object:
    """Run ``scenario`` on every kind and return its one answer; the answers must be equal."""
    answers = {kind: scenario(stores) for kind, stores in every.items()}
    first = answers["jsonl"]
    for kind, answer in answers.items():
        assert answer == first, f"{kind} answers differently from jsonl"
    return first
