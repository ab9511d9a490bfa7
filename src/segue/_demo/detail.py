"""Which detail of the first context window the demo asks the agent to recover. Pure.

After the replay, :func:`choose_detail` looks at the replayed tool results of window ``w:0``
and picks one line of recorded output that appears nowhere in any later window, so the model
cannot answer from its current context: it has to look back with ``session_history``.

Preference: an error line (``SomethingError: message``) over any other informative line;
earlier calls over later ones. The agent searches for the call's command (or its first string
argument), which is how a person would remember it ("what did ``python reproduce_bug.py``
print the first time?"), and reads the oldest hit.

A query must be findable by ``session_history``'s literal search in the projected tool call
(``[tool NAME] {json input}``), so it has no characters JSON escapes (quotes, backslashes,
control characters) and is one line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from segue._context.boundaries import item_id, split_windows
from segue._demo.replay import REPLAY_LABEL
from segue._messages import Row
from segue._views.project import display, is_hidden

MIN_DETAIL_CHARS = 16
MAX_DETAIL_CHARS = 240
MAX_QUERY_CHARS = 120
#: read_item returns this many characters by default; the detail must be on the first page.
FIRST_PAGE_CHARS = 8000

#: An exception with its message, as Python and most tools print it ("AttributeError: …").
_ERROR_RE = re.compile(r"\b[A-Z]\w*(?:Error|Exception): \S")
_QUERY_RE = re.compile(r"[\x20-\x7e]+")
#: Lines that carry no information of their own: the recorded shell's status lines, download
#: progress tables and the fixed first line of a Python traceback.
_NOISE_PREFIXES = ("(Open file", "(Current directory", "bash-$", "%", "Dload", "Traceback (")


@dataclass(frozen=True)
class Detail:
    item_id: str
    tool: str
    query: str
    line: str
    is_error: bool

    def question(self) -> str:
        what = "what error did it print" if self.is_error else "what did it print"
        return (
            f"Before we wrap up: the first time you ran {self.tool} `{self.query}`, {what}? "
            "Quote the exact line."
        )


def query_of(args: Mapping[str, Any]) -> str | None:
    """The command (or first string argument) of a call, when it can be searched literally."""
    command = args.get("command")
    value = command if isinstance(command, str) else next(
        (v for v in args.values() if isinstance(v, str)), None
    )
    if value is None:
        return None
    value = value.strip()
    ok = (
        3 <= len(value) <= MAX_QUERY_CHARS
        and _QUERY_RE.fullmatch(value) is not None
        and '"' not in value
        and "\\" not in value
    )
    return value if ok else None


def _informative(line: str) -> bool:
    return (
        MIN_DETAIL_CHARS <= len(line) <= MAX_DETAIL_CHARS
        and not line.startswith(_NOISE_PREFIXES)
        and sum(c.isalpha() for c in line) >= MIN_DETAIL_CHARS // 2
    )


def _later_text(rows_by_window: Sequence[Sequence[Row]]) -> str:
    shown = (row for rows in rows_by_window for row in rows if not is_hidden(row))
    return "\n".join(display(row).text.casefold() for row in shown)


def choose_detail(rows: Sequence[Row]) -> Detail | None:
    """The detail to recover (see the module docstring), or None when w:0 has none."""
    windows = split_windows(rows)
    later = _later_text([w.rows for w in windows[1:]])
    errors: list[Detail] = []
    others: list[Detail] = []
    asked: set[str] = set()  # only the first call with a given query is "the first time"
    for row in windows[0].rows:
        if row.role != "assistant" or row.sequence is None:
            continue
        shown = display(row).text
        for part in row.parts:
            output = part.output
            if part.type != "dynamic-tool" or not isinstance(output, str):
                continue
            if not output.startswith(REPLAY_LABEL) or not isinstance(part.input, dict):
                continue
            query = query_of(part.input)
            if query is None or query.casefold() in asked:
                continue
            asked.add(query.casefold())
            for raw in output[len(REPLAY_LABEL) :].splitlines():
                line = raw.strip()
                if not _informative(line) or line.casefold() in later:
                    continue
                where = shown.find(line)
                if where < 0 or where + len(line) > FIRST_PAGE_CHARS:
                    continue
                error = _ERROR_RE.search(line) is not None
                found = Detail(item_id(row), part.toolName or "?", query, line, error)
                (errors if error else others).append(found)
    candidates = errors or others
    return candidates[0] if candidates else None
