"""Streamed text wrapped at word boundaries for the line chat (the terminal itself would cut
words in half at its edge). Pure apart from the ``write`` it is given.

Text arrives in pieces of any size; a word is held until its end is seen, so the decision to
break before it is taken with its whole length known. A word longer than the line is cut at
the edge (there is no better place). Newlines in the text are kept; the space at a break is
dropped. ``width`` None passes text through unchanged (output that is not a terminal).
"""

from __future__ import annotations

from collections.abc import Callable


class WordWrap:
    def __init__(self, write: Callable[[str], None], width: int | None) -> None:
        self._write = write
        self.width = width if width is None or width >= 10 else None
        self._col = 0
        self._word = ""
        self._space = False  # a space is held until the next word shows where it goes

    def __call__(self, text: str) -> None:
        if self.width is None:
            self._write(text)
            return
        out: list[str] = []
        for ch in text:
            if ch == "\n":
                self._flush(out)
                self._space = False  # a space before a newline is not shown
                out.append("\n")
                self._col = 0
            elif ch == " ":
                self._flush(out)
                self._space = self._col > 0
            else:
                self._word += ch
                if len(self._word) >= self.width:
                    self._flush(out)
        # What is held is the start of a word: shown as soon as it ends (or at finish).
        self._write("".join(out))

    def _flush(self, out: list[str]) -> None:
        assert self.width is not None
        if not self._word:
            return
        if self._space and self._col + 1 + len(self._word) <= self.width:
            out.append(" ")
            self._col += 1
        elif self._col:
            out.append("\n")  # the break replaces the space
            self._col = 0
        self._space = False
        out.append(self._word)
        self._col += len(self._word)
        self._word = ""

    def finish(self) -> None:
        """Show a held word (the end of the stream)."""
        if self.width is None:
            return
        out: list[str] = []
        self._flush(out)
        if out:
            self._write("".join(out))
