"""Word-boundary wrapping of streamed text, whatever the pieces it arrives in."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from segue._chat.wrap import WordWrap

WORDS = st.lists(st.text(alphabet="abcdefghij", min_size=1, max_size=12), min_size=1,
                 max_size=40)


def _wrap(pieces: list[str], width: int) -> str:
    out: list[str] = []
    wrap = WordWrap(out.append, width)
    for piece in pieces:
        wrap(piece)
    wrap.finish()
    return "".join(out)


@given(WORDS, st.integers(min_value=1, max_value=7), st.integers(min_value=12, max_value=40))
def test_no_line_is_wider_than_the_terminal_and_no_word_is_cut(
    words: list[str], step: int, width: int
) -> None:
    text = " ".join(words)
    pieces = [text[i : i + step] for i in range(0, len(text), step)]
    shown = _wrap(pieces, width)
    assert all(len(line.rstrip()) <= width for line in shown.split("\n"))
    assert shown.split() == words  # every word whole, in order, nothing lost


def test_newlines_are_kept_and_no_width_passes_through() -> None:
    assert _wrap(["one two\nthree"], 20) == "one two\nthree"
    assert _wrap(["aaaa bbbb cccc"], 10) == "aaaa bbbb\ncccc"
    out: list[str] = []
    WordWrap(out.append, None)("x " * 100)
    assert out == ["x " * 100]
