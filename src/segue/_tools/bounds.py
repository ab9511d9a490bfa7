"""Output bounds shared by the workspace tools. Pure.

Every tool result is bounded in bytes before the engine's settled-tool-output guard (R17)
ever sees it: the guard is a last resort that replaces a result wholesale, while these bounds
keep the useful part and say exactly where to continue. Cuts never split a UTF-8 sequence.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Bytes examined to tell text from binary (the same window git uses for its own guess).
SNIFF_BYTES = 8000


def looks_binary(head: bytes) -> bool:
    """A NUL byte, or bytes that are not UTF-8, in the first ``SNIFF_BYTES`` bytes.

    An incomplete multi-byte sequence at the very end of the sample is not held against it:
    the sample may simply have cut a character in two.
    """
    sample = head[:SNIFF_BYTES]
    if b"\x00" in sample:
        return True
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        return not (exc.reason == "unexpected end of data" and exc.start >= len(sample) - 3)
    return False


def utf8_prefix(data: bytes, limit: int) -> bytes:
    """The longest prefix of ``data`` of at most ``limit`` bytes ending on a character edge."""
    if len(data) <= limit:
        return data
    end = limit
    while end > 0 and (data[end] & 0xC0) == 0x80:
        end -= 1
    return data[:end]


def utf8_suffix(data: bytes, limit: int) -> bytes:
    """The longest suffix of ``data`` of at most ``limit`` bytes starting on a character edge."""
    if len(data) <= limit:
        return data
    start = len(data) - limit
    while start < len(data) and (data[start] & 0xC0) == 0x80:
        start += 1
    return data[start:]


def cut_text(text: str, limit: int) -> tuple[str, int]:
    """``text`` cut to at most ``limit`` UTF-8 bytes; returns it and how many bytes were dropped."""
    data = text.encode("utf-8", "surrogatepass")
    kept = utf8_prefix(data, limit)
    return kept.decode("utf-8", "replace"), len(data) - len(kept)


class HeadTail:
    """Keeps the first ``head`` and the last ``tail`` bytes of a stream of any length, and
    counts every byte, in memory bounded by ``head + 2 * tail``."""

    def __init__(self, head: int, tail: int) -> None:
        self._head_limit = head
        self._tail_limit = tail
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self._head_limit - len(self._head)
        if room > 0:
            self._head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self._tail += chunk
            if len(self._tail) > 2 * self._tail_limit:
                del self._tail[: len(self._tail) - self._tail_limit]

    @property
    def truncated(self) -> bool:
        return self.total > self._head_limit + self._tail_limit

    def text(self) -> str:
        """The whole stream when it fit, else head, a marker naming the bytes left out, tail."""
        if not self.truncated:
            return (bytes(self._head) + bytes(self._tail)).decode("utf-8", "replace")
        head = utf8_prefix(bytes(self._head), self._head_limit)
        tail = utf8_suffix(bytes(self._tail), self._tail_limit)
        omitted = self.total - len(head) - len(tail)
        return (
            head.decode("utf-8", "replace")
            + f"\n[… {omitted} bytes omitted of {self.total} …]\n"
            + tail.decode("utf-8", "replace")
        )


@dataclass(frozen=True)
class LinePage:
    """Numbered lines ``first``..``last`` of a file, and where the next page starts."""

    content: str
    first: int
    last: int
    next_line: int | None
    cut_lines: int
    reason: str | None


def number_lines(
    lines: list[str], *, first: int, max_bytes: int, max_line_chars: int, more: bool
) -> LinePage:
    """Format ``lines`` (numbered from ``first``) as ``cat -n`` does, within ``max_bytes``.

    ``more`` says whether the file has lines after ``lines``. A line longer than
    ``max_line_chars`` is shown cut, with a marker saying so, so one minified
    line cannot eat the whole page; whole lines beyond ``max_bytes`` are left for the next
    page (``next_line``).
    """
    out: list[str] = []
    used = 0
    cut = 0
    number = first
    reason: str | None = None
    for line in lines:
        shown = line
        if len(line) > max_line_chars:
            shown = f"{line[:max_line_chars]}… [line cut at {max_line_chars} characters]"
            cut += 1
        entry = f"{number:>6}\t{shown}\n"
        size = len(entry.encode("utf-8", "surrogatepass"))
        if out and used + size > max_bytes:
            reason = f"output limit of {max_bytes} bytes"
            break
        out.append(entry)
        used += size
        number += 1
    last = first + len(out) - 1
    if reason is None and more:
        reason = "line limit"
    next_line = last + 1 if reason is not None else None
    return LinePage("".join(out), first, last, next_line, cut, reason)
