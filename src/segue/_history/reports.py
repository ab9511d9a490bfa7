"""Reports returned by the store (plain values)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class RecoveryReport:
    """What a recovery did. ``actions`` are repairs made; ``problems`` are states it could not
    resolve safely and left as found (nothing is ever deleted to make them go away)."""

    actions: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    new_epoch: bool = False
    #: the stable receipt matched both files, so nothing needed checking (the fast path)
    receipt_verified: bool = False

    @property
    def changed(self) -> bool:
        return bool(self.actions)


@dataclass
class VerifyReport:
    """``problems`` are damage (``segue history verify`` exits 1); ``warnings`` are not."""

    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    rows: int = 0
    lines: int = 0
    receipt_state: str = "missing"

    @property
    def ok(self) -> bool:
        return not self.problems
