"""The context meter shown at the prompt: "42% · rolls over by 75%" (SPEC.md R2, R3).

The figure is an upper bound of how full the next request will be before the user types
anything: the larger of the exact count of what would be sent now (system text, advertised
tools, active rows) and the usage the provider reported for the window's newest step. A
compaction boundary's own usage is that of the summarizing request, not of the new window,
so it is left out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from segue._context.assembly import last_step_usage
from segue._context.budget import FORCE_BUFFER, Budget, rollover_label, trigger_label
from segue._messages import Row


def reported_usage(window: Sequence[Row]) -> int:
    """Provider-reported tokens of the window's newest step (0 when there is none)."""
    return last_step_usage([row for row in window if not row.flag("compactionBoundary")])


def label(threshold: int, *, experiment: bool, limit: int | None = None) -> str:
    """What happens at the threshold, lower-case for the meter: with the experiment off the
    ordinary automatic compaction fires there instead of a rollover (R1). With the model's
    ``limit`` the percent is the real trigger point (the hard ceiling when it comes first)."""
    if limit is not None:
        return trigger_label(Budget(limit, threshold), experiment=experiment)
    if experiment:
        return rollover_label(threshold).lower()
    if threshold >= 100:
        return "automatic compaction off"
    return f"compacts by {threshold + FORCE_BUFFER}%"


def meter_text(
    percent: int, threshold: int, *, experiment: bool, limit: int | None = None
) -> str:
    return due(percent, label(threshold, experiment=experiment, limit=limit))


_BY = re.compile(r"(rolls over|compacts) by (\d+)%")


def due(percent: int, what: str, *, figure: str | None = None) -> str:
    """The meter: ``percent`` (shown as ``figure`` when given, e.g. an estimate) and what
    happens at the trigger point. At or past the point the
    next message sets it off, so the meter says that instead of a percent already passed
    ("60% · rolls over by 55%" would read as if there were room left)."""
    found = _BY.fullmatch(what)
    if found is not None and percent >= int(found.group(2)):
        what = f"{found.group(1)} with the next message"
    return f"{figure or f'{percent}%'} · {what}"
