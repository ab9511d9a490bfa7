"""What ``segue history search`` prints, and the writer every ``segue history`` listing uses.

No click here: the fast path of the search (:mod:`segue._cli.quick_search`) prints through
these same functions, so both paths print the same bytes.

Output is written as UTF-8 bytes with ``backslashreplace``: a transcript may hold lone
surrogates (JavaScript writers emit them), which must not crash a listing.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from segue._views.windows import Hit

#: What `history search` covers, exactly: the items `history read` shows, in every window.
SEARCH_HEADER = (
    "Searching the whole transcript of workspace {ws}: every item of every window, including "
    "what the agent cannot see (text before a /clear --soft, rejected input); hidden rows and "
    "reasoning are not items and are not searched."
)


def write(text: str) -> None:
    # Bytes, so a lone surrogate in a transcript is shown escaped instead of crashing the
    # text layer. ``sys.stdout`` is looked up per call (click's test runner swaps it).
    stream = sys.stdout.buffer
    stream.write(text.encode("utf-8", "backslashreplace"))
    stream.flush()


def _dropped(_text: str) -> None:
    pass


def write_json(value: Any) -> None:
    from segue._messages import encode_obj

    write(encode_obj(value).decode("utf-8") + "\n")


def print_search(workspace_id: str, query: str, hits: Iterable[Hit], *, as_json: bool) -> int:
    """Print the search's listing (or its JSON document) of ``hits``, in the order given;
    how many there were."""
    header = SEARCH_HEADER.format(ws=workspace_id)
    if as_json:
        items = [{**h.item.to_obj(), "text": h.snippet, "matches": h.matches} for h in hits]
        write_json({"scope": header, "query": query, "items": items})
        return len(items)
    # On a terminal the listing is framed by its scope and count; in a pipe the output is the
    # hits alone, like grep's (the exit status says whether there were any; --json has both).
    frame = write if sys.stdout.isatty() else _dropped
    frame(header + "\n\n")
    count = 0
    for hit in hits:
        count += 1
        label = hit.item.view.label + (" (rejected)" if hit.item.view.rejected else "")
        write(f"#{hit.item.item_id} ({hit.item.window_id}, {label}, {hit.matches}×): ")
        write(hit.snippet + "\n")
    frame(f"\n{count} matching item(s).\n" if count else "No matches.\n")
    return count
