"""Calibration: what providers reported against what segue estimated, per model family.

Pure values and maths; :mod:`segue._tokens.calibration_file` persists them. The observed
ratio (reported / estimated, summed over samples) tells later work whether a family's
factor (:mod:`segue._tokens.registry`) is too loose or too tight; ``max_ratio`` shows the worst
single request, which is what a hard guard has to survive.

The stored form (``SEGUE_HOME/calibration.json``)::

    {"version": 1, "families": {"claude": {"samples": 3, "estimated": 9000,
      "reported": 7100, "maxRatio": 0.83, "minRatio": 0.71}}}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

VERSION = 1


@dataclass(frozen=True)
class FamilyStats:
    samples: int = 0
    estimated: int = 0
    reported: int = 0
    max_ratio: float = 0.0
    min_ratio: float = 0.0

    @property
    def ratio(self) -> float | None:
        """Reported / estimated over all samples (None before the first sample)."""
        return self.reported / self.estimated if self.estimated else None

    def add(self, estimated: int, reported: int) -> FamilyStats:
        one = reported / estimated
        return FamilyStats(
            samples=self.samples + 1,
            estimated=self.estimated + estimated,
            reported=self.reported + reported,
            max_ratio=max(self.max_ratio, one) if self.samples else one,
            min_ratio=min(self.min_ratio, one) if self.samples else one,
        )


@dataclass(frozen=True)
class Calibration:
    families: Mapping[str, FamilyStats] = field(default_factory=dict)

    def record(self, family: str, estimated: int, reported: int) -> Calibration:
        """A copy with one sample added. Samples with a non-positive side carry no
        information about the ratio and are refused."""
        if estimated <= 0 or reported <= 0:
            raise ValueError("calibration samples need positive estimated and reported counts")
        families = dict(self.families)
        families[family] = families.get(family, FamilyStats()).add(estimated, reported)
        return replace(self, families=families)

    def ratio(self, family: str) -> float | None:
        stats = self.families.get(family)
        return stats.ratio if stats is not None else None

    def to_obj(self) -> dict[str, Any]:
        return {
            "version": VERSION,
            "families": {
                name: {
                    "samples": s.samples,
                    "estimated": s.estimated,
                    "reported": s.reported,
                    "maxRatio": s.max_ratio,
                    "minRatio": s.min_ratio,
                }
                for name, s in sorted(self.families.items())
            },
        }


def from_obj(obj: Any) -> Calibration:
    """Parse the stored form; raises ValueError or TypeError on anything malformed."""
    if not isinstance(obj, dict) or obj.get("version") != VERSION:
        raise ValueError("not a version-1 calibration object")
    raw = obj.get("families")
    if not isinstance(raw, dict):
        raise TypeError("'families' must be an object")
    families: dict[str, FamilyStats] = {}
    for name, entry in raw.items():
        if not isinstance(entry, dict):
            raise TypeError(f"family {name!r}: not an object")
        ints = [entry.get(k) for k in ("samples", "estimated", "reported")]
        floats = [entry.get(k) for k in ("maxRatio", "minRatio")]
        if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in ints):
            raise ValueError(f"family {name!r}: bad counts")
        if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in floats):
            raise ValueError(f"family {name!r}: bad ratios")
        families[name] = FamilyStats(
            samples=int(entry["samples"]),
            estimated=int(entry["estimated"]),
            reported=int(entry["reported"]),
            max_ratio=float(entry["maxRatio"]),
            min_ratio=float(entry["minRatio"]),
        )
    return Calibration(families)
