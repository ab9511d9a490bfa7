"""R17's forced-cut slack with SPEC.md §6's numbers written out (4,096 code points per chunk,
8 tokens of slack per extra chunk), through ``segue tokens count`` and the counter: a string
with no clean cut is counted in chunks of exactly 4,096 code points, never below the real
encoding's count of the whole string and never more than 8 tokens above it per extra chunk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from segue._tokens import encodings
from segue._tokens.chunking import chunks
from segue._tokens.counting import count_text
from tests.conftest import scaled
from tests.front import cli

SPEC_CHUNK = 4096  # code points (SPEC.md §6)
SPEC_SLACK = 8  # tokens per extra chunk (SPEC.md §6)


def exact(text: str) -> int:
    return len(encodings.get("o200k_base").encode_ordinary(text))


def cli_count(home: Path, text: str) -> int:
    result = CliRunner().invoke(
        cli, ["--home", str(home), "-w", "t", "tokens", "count", "--json", "-"], input=text
    )
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["encoding"] == "o200k_base" and out["exact"] is True
    tokens: int = out["tokens"]
    return tokens


# Astral code points are two UTF-16 units and four UTF-8 bytes: the chunk size is in code
# points, not in either of those.
@pytest.mark.parametrize("unit", ["x", "😀", "中"])
def test_chunks_are_4096_code_points(unit: str) -> None:
    assert [(c.start, c.end) for c in chunks(unit * SPEC_CHUNK)] == [(0, SPEC_CHUNK)]
    cuts = [(c.end, c.forced) for c in chunks(unit * (3 * SPEC_CHUNK + 1))]
    assert cuts == [(SPEC_CHUNK, True), (2 * SPEC_CHUNK, True), (3 * SPEC_CHUNK, True),
                    (3 * SPEC_CHUNK + 1, False)]  # fmt: skip


@pytest.mark.parametrize("unit", ["x", "😀", "中", "ab"])
def test_one_chunk_is_exact_and_forced_cuts_stay_within_8_tokens_each(
    segue_home: Path, unit: str
) -> None:
    whole = (unit * SPEC_CHUNK)[:SPEC_CHUNK]
    assert cli_count(segue_home, whole) == exact(whole)
    for extra_chunks in (1, 2, 4):
        text = (unit * (SPEC_CHUNK * (extra_chunks + 1)))[: SPEC_CHUNK * extra_chunks + 1000]
        got = cli_count(segue_home, text)
        assert exact(text) <= got <= exact(text) + SPEC_SLACK * extra_chunks


_NO_SPACE = st.sampled_from(["a", "Z", "0", ".", "/", "中", "한", "ع", "\u0301", "👍", "🏽", "_"])


@settings(max_examples=scaled(20, 200), deadline=None)
@given(seed=st.lists(_NO_SPACE, min_size=1, max_size=50).map("".join), extra=st.integers(1, 3))
def test_no_clean_cut_text_is_bounded_by_the_spec_slack(seed: str, extra: int) -> None:
    text = (seed * (SPEC_CHUNK * (extra + 1) // len(seed) + 1))[: SPEC_CHUNK * extra + 7]
    counted = count_text(encodings.get("o200k_base"), text)
    # A cut may step back a few code points to keep a grapheme whole, never forward.
    assert counted.chunks >= extra + 1
    assert exact(text) <= counted.tokens <= exact(text) + SPEC_SLACK * (counted.chunks - 1)
