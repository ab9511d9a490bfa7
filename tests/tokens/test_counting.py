"""Chunked counting against tiktoken's own count of the whole string, with the bundled files."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from segue._errors import EncodingError
from segue._tokens import encodings
from segue._tokens.chunking import CHUNK_CODE_POINTS, WHITESPACE, chunks
from segue._tokens.counting import SLACK_PER_CHUNK, count_text
from tests.conftest import scaled

NAMES = encodings.ENCODING_NAMES


def exact(name: str, text: str) -> int:
    return len(encodings.get(name).encode_ordinary(text))


def chunked(name: str, text: str, **kwargs: Any) -> int:
    return count_text(encodings.get(name), text, **kwargs).tokens


def pad_to(prefix_len: int, text: str, filler: str = "x") -> str:
    """``text`` placed so it straddles the first 4,096-code-point window boundary."""
    return filler * prefix_len + text


HARD_CASES = {
    "zwj-family": "👨‍👩‍👧‍👦 and 👩🏽‍💻 👍🏿",
    "flags": "🇫🇷🇩🇪🇯🇵🇺🇸🏳️‍🌈",
    "cjk": "日本語のテキストと中文文本，还有한국어 텍스트。",
    "arabic": "مرحبا بالعالم، هذا نص عربي مع تشكيل: كَتَبَ",
    "combining": "e\u0301\u0302\u0303 a\u030a Z\u0351\u0352\u0353 n\u0303",
    "crlf": "line one\r\nline two\r\n\r\n\tindented\r\n",
    "spaces": " " * 300 + "x" + " " * 77,
    "newlines": "\n" * 500 + "end" + "\n\n\n",
    "special-text": "before <|endoftext|> after <|endofprompt|> <|fim_prefix|>",
    "lone-surrogate": "broken \ud83d here",
    "surrogate-pair-chars": "pair \ud83d\ude00 here",
}


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("case", sorted(HARD_CASES))
def test_short_hard_cases_are_exact(name: str, case: str) -> None:
    text = HARD_CASES[case]
    assert chunked(name, text) == exact(name, text)


def test_special_token_text_counts_as_plain_text() -> None:
    enc = encodings.get("o200k_base")
    tokens = enc.encode_ordinary("<|endoftext|>")
    assert len(tokens) > 1
    assert 199999 not in tokens
    assert chunked("o200k_base", "<|endoftext|>") == len(tokens)


def bound(name: str, text: str) -> tuple[int, int, int]:
    n_chunks = sum(1 for _ in chunks(text))
    return exact(name, text), chunked(name, text), n_chunks


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("case", sorted(HARD_CASES))
@pytest.mark.parametrize("offset", [1, 2, 3, 5, 8])
def test_window_boundary_inside_hard_cases(name: str, case: str, offset: int) -> None:
    # No spaces or newlines before: the first cut is forced into the middle of the case.
    text = pad_to(CHUNK_CODE_POINTS - offset, HARD_CASES[case] * 3) + "x" * 5000
    want, got, n = bound(name, text)
    assert want <= got <= want + SLACK_PER_CHUNK * (n - 1)


def test_forced_cut_never_splits_surrogate_pair_or_grapheme() -> None:
    pair = "\ud83d\ude00"
    text = "x" * (CHUNK_CODE_POINTS - 1) + pair + "x" * 100
    cuts = [c.end for c in chunks(text)][:-1]
    assert cuts == [CHUNK_CODE_POINTS - 1]
    family = "👨‍👩‍👧"
    text = "x" * (CHUNK_CODE_POINTS - 2) + family + "x" * 100
    cuts = [c.end for c in chunks(text)][:-1]
    assert cuts == [CHUNK_CODE_POINTS - 2]
    flags = "🇫🇷🇩🇪"
    text = "x" * (CHUNK_CODE_POINTS - 3) + flags + "x" * 100
    cut = next(iter(chunks(text))).end
    assert cut in (CHUNK_CODE_POINTS - 3, CHUNK_CODE_POINTS - 1)  # between flags, not inside


@pytest.mark.parametrize("name", NAMES)
def test_clean_cuts_are_exact_on_long_prose(name: str) -> None:
    words = "The quick brown fox, 42 times: jumps over the lazy dog.\n"
    text = "".join(f"{i} {words}" for i in range(3000))
    parts = list(chunks(text))
    assert len(parts) > 10
    assert not any(p.forced for p in parts)
    assert all(p.end - p.start <= CHUNK_CODE_POINTS for p in parts)
    assert chunked(name, text) == exact(name, text)


@pytest.mark.parametrize("name", NAMES)
def test_long_cjk_without_spaces_stays_within_slack(name: str) -> None:
    text = "中文文本没有空格所以需要强制切分日本語も同じです" * 2000
    want, got, n = bound(name, text)
    assert n > 5
    assert want <= got <= want + SLACK_PER_CHUNK * (n - 1)


def test_ceiling_stops_early() -> None:
    enc = encodings.get("o200k_base")
    text = "word " * 200_000
    result = count_text(enc, text, ceiling=1000)
    assert not result.complete
    assert 1000 < result.tokens < 10_000
    assert result.chunks < 10
    full = count_text(enc, text, ceiling=10**9)
    assert full.complete
    assert full.tokens == exact("o200k_base", text)


def test_encoder_failure_raises() -> None:
    class Broken:
        name = "broken"

        def encode_ordinary(self, text: str) -> list[int]:
            raise ValueError("boom")

    with pytest.raises(EncodingError, match="tokenizer broken failed: boom"):
        count_text(Broken(), "hello")


# -- properties ---------------------------------------------------------------------------

_SPECIAL = [
    "中",
    "文",
    "한",
    "ع",
    "ب",
    "\u0301",
    "\u200d",
    "👍",
    "🏽",
    "🇫",
    "🇷",
    "\ud83d",
    "\ude00",
]
ALPHABET = st.sampled_from([*"abcXYZ 019.,;/\\\"'\n\r\t", *_SPECIAL, *sorted(WHITESPACE)])
TEXT = st.lists(
    st.one_of(st.text(min_size=1, max_size=30), st.lists(ALPHABET, max_size=40).map("".join)),
    max_size=40,
).map("".join)


@settings(max_examples=scaled(150, 2000), deadline=None)
@given(text=TEXT, size=st.sampled_from([8, 16, 33, 64]), name=st.sampled_from(NAMES))
def test_chunked_count_bounds_small_chunks(text: str, size: int, name: str) -> None:
    n = sum(1 for _ in chunks(text, size))
    got = chunked(name, text, chunk_size=size)
    want = exact(name, text)
    assert want <= got <= want + SLACK_PER_CHUNK * (n - 1)


@settings(max_examples=scaled(25, 300), deadline=None)
@given(seed=TEXT, name=st.sampled_from(NAMES))
def test_chunked_count_bounds_real_chunk_size(seed: str, name: str) -> None:
    text = (seed or "x") * (CHUNK_CODE_POINTS * 2 // max(1, len(seed)) + 1)
    want, got, n = bound(name, text)
    assert want <= got <= want + SLACK_PER_CHUNK * (n - 1)
