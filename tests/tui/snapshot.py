"""SVG snapshots of the full-screen chat, compared with baselines in ``tests/tui/snapshots/``.

A screen is Textual's own SVG export (``App.export_screenshot``). The only part of it that
changes from one render of the same screen to the next is the CSS class prefix Rich gives each
export (``terminal-<number>``, from a hash); that prefix is normalised, and everything else —
every character, colour and style on the screen — must match the baseline exactly. The tests
make the rest deterministic themselves: a fixed size, a fixed clock, relative paths, a scripted
provider and a cursor that does not blink.

To make or update the baselines after a deliberate change to what a screen shows::

    SEGUE_SNAPSHOT_UPDATE=1 python3 -m pytest -q tests/tui/test_snapshots.py

then look at the changed ``.svg`` files (any browser shows them) before committing them. A
failing comparison writes the screen it got next to the test's temporary files and prints the
difference as text, line by line.
"""

from __future__ import annotations

import difflib
import html
import os
import re
from importlib.metadata import version
from pathlib import Path

import pytest

SNAPSHOTS = Path(__file__).parent / "snapshots"
UPDATE_VARIABLE = "SEGUE_SNAPSHOT_UPDATE"
#: The versions the baselines were made with (a different Textual may draw differently).
VERSIONS = SNAPSHOTS / "VERSIONS"

#: Rich's per-render id, as the export's first class name spells it ("terminal-123-matrix").
_ID = re.compile(r'class="(terminal-\d+)-')
_TEXT = re.compile(
    r'<text class="[^"]*" x="([\d.]+)" y="([\d.]+)" textLength="[\d.]+"[^>]*>([^<]*)</text>'
)
#: The width of one cell in Rich's SVG export, in its units.
_CELL = 12.2


def normalised(svg: str) -> str:
    """The export without its per-render id (only that id: the screen's text is untouched,
    even where it happens to contain the same letters)."""
    match = _ID.search(svg)
    if match is None:
        return svg
    return re.sub(rf"\b{re.escape(match[1])}-", "terminal-", svg)


def screen_text(svg: str) -> list[str]:
    """The characters of the screen, one string per row (for a readable difference)."""
    rows: dict[float, list[tuple[float, str]]] = {}
    for match in _TEXT.finditer(svg):
        x, y, text = float(match[1]), float(match[2]), match[3]
        rows.setdefault(y, []).append((x, html.unescape(text).replace("\xa0", " ")))
    out = []
    for y in sorted(rows):
        line = ""
        for x, text in sorted(rows[y]):
            line = line.ljust(round(x / _CELL)) + text
        out.append(line.rstrip())
    return out


def _versions() -> str:
    return f"textual {version('textual')}\nrich {version('rich')}\n"


def assert_snapshot(
    name: str, svg: str, scratch: Path, *, baselines: Path = SNAPSHOTS, update: bool | None = None
) -> None:
    """``svg`` matches the baseline ``name``.svg in ``baselines``, or becomes it when updating
    (``update``; by default when the environment says so)."""
    got = normalised(svg)
    baseline = baselines / f"{name}.svg"
    versions = baselines / VERSIONS.name
    if update is None:
        update = os.environ.get(UPDATE_VARIABLE) == "1"
    if update:
        baselines.mkdir(exist_ok=True)
        baseline.write_text(got, encoding="utf-8")
        versions.write_text(_versions(), encoding="utf-8")
        return
    if not baseline.exists():
        pytest.fail(f"no baseline {baseline}: make it with {UPDATE_VARIABLE}=1 and look at it")
    want = baseline.read_text(encoding="utf-8")
    if got == want:
        return
    actual = scratch / f"{name}.svg"
    actual.write_text(got, encoding="utf-8")
    diff = "\n".join(
        difflib.unified_diff(
            screen_text(want), screen_text(got), "baseline", "this run", lineterm=""
        )
    ) or "(the same characters; colours or styles differ)"
    made = versions.read_text(encoding="utf-8") if versions.exists() else "unknown"
    note = "" if made == _versions() else (
        f"\nthe baselines were made with {made.strip()!r}; this is {_versions().strip()!r}"
    )
    pytest.fail(
        f"screen {name!r} differs from {baseline} (this run's screen: {actual}; "
        f"{UPDATE_VARIABLE}=1 updates the baseline){note}\n{diff}",
        pytrace=False,
    )
