"""Any line that is not a JSON object refuses the whole file, wherever it stands (both
formats), and names its line."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from segue._importers import claude_code, codex
from segue._importers.entries import Entry, ImportRefused

SAMPLES = Path(__file__).parent / "samples"


def _not_an_object(text: str) -> bool:
    if not text.strip() or "\n" in text or "\r" in text:
        return False
    try:
        return not isinstance(json.loads(text), dict)
    except ValueError:
        return True


@pytest.mark.parametrize(
    ("parse", "sample"),
    [(claude_code.parse, "claude-code-session.jsonl"), (codex.parse, "codex-rollout.jsonl")],
)
@settings(max_examples=60, deadline=None)
@given(bad=st.text(max_size=40).filter(_not_an_object), where=st.integers(0, 20))
def test_a_bad_line_anywhere_refuses_the_file(
    parse: Callable[[bytes, str], list[Entry]], sample: str, bad: str, where: int
) -> None:
    lines = (SAMPLES / sample).read_text(encoding="utf-8").splitlines()
    at = min(where, len(lines))
    lines.insert(at, bad)
    data = ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")
    with pytest.raises(ImportRefused, match=f"line {at + 1}"):
        parse(data, "f.jsonl")
