"""Compaction: a summary from the provider stored as a compaction boundary (R1, R4).

Used by ``/compact``, idle compaction, and the ordinary automatic compaction when the
token-budget experiment is off. Lessons kept: a failed or empty summary is never committed,
and a compaction request that cannot fit is refused once, never retried in a loop.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from segue._errors import CompactionFailed
from segue._messages import Row, make_row
from segue._providers.base import Provider, StepResult
from segue._providers.request import ProviderRequest

COMPACT_INSTRUCTION = (
    "[segue] Summarize this conversation so far for your own later use: the task, what was "
    "decided, what was done (files changed, commands run, results), and what is left to do. "
    "Be specific (names, paths, numbers). Reply with the summary only; do not call tools."
)


def compaction_request(
    system: str,
    window: Sequence[Row],
    tools: Sequence[Mapping[str, Any]],
    *,
    instruction_id: str,
) -> ProviderRequest:
    """The summary request: the window's own system text and advertised tools, then its rows
    and the instruction. Tools come first in a provider's cached prefix, so leaving them out
    would make the request read nothing the window's turns wrote and write the whole window
    again (at 1.25x) into an entry nobody reads; a reply that calls a tool anyway is refused
    by :func:`summary_from`."""
    instruction = make_row("user", COMPACT_INSTRUCTION, id=instruction_id)
    return ProviderRequest(system, (*window, instruction), tuple(tools))


def summary_from(result: StepResult) -> str:
    """The summary text, or CompactionFailed when the reply is not a usable summary."""
    if result.tool_calls:
        raise CompactionFailed("the model called tools instead of writing a summary")
    summary = result.text.strip()
    if not summary:
        raise CompactionFailed("the model returned an empty summary")
    return summary


#: Xum's ``compacted`` value for each of segue's compaction reasons (``true``: automatic)
COMPACTED_BY: dict[str, bool | str] = {"manual": "user", "idle": "idle"}


def compaction_row(
    summary: str,
    *,
    row_id: str,
    now_ms: int,
    epoch: int,
    reason: str,
    provider: Provider,
    usage: dict[str, int],
) -> Row:
    return make_row(
        "assistant",
        f"[Summary of the conversation so far]\n{summary}",
        id=row_id,
        metadata={
            "timestamp": now_ms,
            "compactionBoundary": True,
            "compacted": COMPACTED_BY.get(reason, True),
            "compactionEpoch": epoch,
            "compactionReason": reason,
            "model": provider.model,
            "usage": usage,
        },
    )
