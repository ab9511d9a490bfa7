"""Selecting the memory context for a request (R15). Pure over (name, text) entries.

Ordinary selection takes the eight most recently changed entries and lists them by name, so
the text depends on what the files say, never on when they were last saved: saving a file
again (same content, new modification time) leaves the system text, and with it the
provider's prompt cache, as it was. While token-budget
mode is active, the context notes are appended after that as a ninth entry with an allowance
of their own (8 KiB and 2,000 tokens, formatting included), so they never displace the normal
eight or spend their budget; notes that were already selected normally are not repeated.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

HOT_ENTRIES = 8
ENTRY_BYTES = 8 * 1024
NOTES_BYTES = 8 * 1024
NOTES_TOKENS = 2000
NOTES_NAME = "context-notes.md"
_TRUNCATED = "\n[... truncated]"


@dataclass(frozen=True)
class Memory:
    name: str
    text: str
    mtime_ns: int = 0


def _clip_bytes(text: str, limit: int) -> str:
    """At most ``limit`` UTF-8 bytes, cut on a code-point boundary."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text
    return data[:limit].decode("utf-8", "ignore")


def format_entry(name: str, text: str) -> str:
    return f'<memory name="{name}">\n{text}\n</memory>'


def _notes_entry(text: str, count: Callable[[str], int]) -> str:
    """The notes entry within 8 KiB and 2,000 tokens, formatting included."""
    body = text
    while True:
        entry = format_entry(NOTES_NAME, body)
        if len(entry.encode("utf-8", "surrogatepass")) <= NOTES_BYTES and count(entry) <= (
            NOTES_TOKENS
        ):
            return entry
        # Shrink by the overshoot ratio (at least 64 bytes) and mark the cut.
        size = len(body.encode("utf-8", "surrogatepass"))
        over = max(
            len(entry.encode("utf-8", "surrogatepass")) / NOTES_BYTES, count(entry) / NOTES_TOKENS
        )
        new_size = max(0, min(size - 64, int(size / over) - len(_TRUNCATED)))
        body = _clip_bytes(body, new_size) + _TRUNCATED if new_size > 0 else ""
        if not body:
            return format_entry(NOTES_NAME, "")


def select_memory(
    memories: Sequence[Memory],
    *,
    token_budget_mode: bool,
    count: Callable[[str], int],
) -> list[str]:
    """Formatted memory entries for the system text, in order.

    ``memories`` holds every memory file of the workspace, the notes file included (under
    :data:`NOTES_NAME`) with its real modification time.
    """
    newest = sorted(memories, key=lambda m: (-m.mtime_ns, m.name))[:HOT_ENTRIES]
    ordinary = sorted(newest, key=lambda m: m.name)
    entries = [format_entry(m.name, _clip_bytes(m.text, ENTRY_BYTES)) for m in ordinary]
    if token_budget_mode and all(m.name != NOTES_NAME for m in ordinary):
        notes = next((m for m in memories if m.name == NOTES_NAME and m.text.strip()), None)
        if notes is not None:
            entries.append(_notes_entry(notes.text, count))
    return entries
