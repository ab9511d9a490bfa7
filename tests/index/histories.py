"""Random transcript histories for the index tests: every shape R11, R25 and R27 care about,
written straight to disk with a stable receipt (tests.retrieval.helpers)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from segue._messages import Part, Role, encode_row, make_row
from segue._retrieval.index_build import rebuild
from segue._workspace import Layout
from tests.retrieval.helpers import (
    MUTATIONS,
    malformed_rollover,
    manual_reset,
    rollover,
    text_row,
    write_history,
)

WORDS = ["needle", "NEEDLE", "Straße", "straße", "\u212aelvin", "kelvin", "İstanbul", "hay", "ne"]
TOOLS = ["bash", "file_read", "session_history"]
#: line kinds that may be a floor (everything before the newest one is private)
FLOORS = {"reset", "damaged", "raw-reset", "huge-reset"}
KINDS = [
    "text",
    "text",
    "text",
    "tool",
    "lead-in",
    "synthetic-visible",
    "rollover",
    "compaction",
    "reset",
    "damaged",
    "raw-reset",
    "raw",
    "reused",
]


@dataclass(frozen=True)
class Op:
    kind: str
    word: str
    role: str
    tool: str


ops = st.builds(
    Op,
    kind=st.sampled_from(KINDS),
    word=st.sampled_from(WORDS),
    role=st.sampled_from(["user", "assistant", "system"]),
    tool=st.sampled_from(TOOLS),
)


def line_of(i: int, op: Op, seq: int) -> bytes:
    """One transcript line for ``op``; text rows carry ``r<i>`` so a test can tell which
    line a returned item came from."""
    text = f"{op.word} r{i} tail"
    meta: dict[str, Any] = {"timestamp": 1_700_000_000_000 + i, "historySequence": seq}
    if op.kind in ("text", "reused"):
        return encode_row(text_row(text, seq, role=op.role, rid=f"id{i}"))
    if op.kind == "tool":
        part = Part(
            type="dynamic-tool",
            toolName=op.tool,
            toolCallId=f"c{i}",
            input={"q": text},
            state="output-available",
            output=f"out r{i}",
        )
        role: Role = op.role  # type: ignore[assignment]
        return encode_row(make_row(role, f"calls r{i}", id=f"id{i}", parts=[part], metadata=meta))
    if op.kind == "lead-in":
        meta.update(synthetic=True, uiVisible=False)
        return encode_row(make_row("user", text, id=f"id{i}", metadata=meta))
    if op.kind == "synthetic-visible":
        meta.update(synthetic=True, uiVisible=True)
        return encode_row(make_row("user", text, id=f"id{i}", metadata=meta))
    if op.kind == "rollover":
        return encode_row(rollover(seq, rid=f"b{i}"))
    if op.kind == "compaction":
        meta.update(compactionBoundary=True, compacted=True, compactionEpoch=1)
        return encode_row(make_row("assistant", f"summary r{i}", id=f"id{i}", metadata=meta))
    if op.kind == "reset":
        return encode_row(manual_reset(seq))
    if op.kind == "damaged":
        return malformed_rollover(seq, sorted(MUTATIONS)[seq % len(MUTATIONS)])
    if op.kind == "raw-reset":
        return b'{"id":"x' + str(i).encode() + b'","metadata":{"contextBoundaryKind":"reset"'
    if op.kind == "raw":
        return b"not json r" + str(i).encode()
    if op.kind == "huge":
        return encode_row(text_row("needle " + "z" * (1 << 20), seq, rid=f"id{i}"))
    if op.kind == "huge-reset":
        big = {
            "id": f"h{i}",
            "role": "user",
            "parts": [{"type": "text", "text": "z" * (1 << 20)}],
            "metadata": {"historySequence": seq, "contextBoundaryKind": "reset"},
        }
        return json.dumps(big).encode()
    raise AssertionError(op.kind)


def lines_of(history: list[Op]) -> list[bytes]:
    out: list[bytes] = []
    seq = 0
    for i, op in enumerate(history):
        if op.kind == "reused" and seq > 0:
            seq -= 1  # a replayed duplicate (R27)
        out.append(line_of(i, op, seq))
        seq += 1
    return out


def private_tags(history: list[Op]) -> set[str]:
    """``r<i>`` tags of every line before the newest floor candidate."""
    last = max((i for i, op in enumerate(history) if op.kind in FLOORS), default=-1)
    return {f"r{i}" for i in range(last)}


def write(layout: Layout, history: list[Op], split: int) -> None:
    lines = lines_of(history)
    cut = min(split, len(lines))
    write_history(layout, lines[:cut], lines[cut:])


def fresh_layout(root: Path, name: str) -> Layout:
    return Layout(root / name, "ws")


def build(layout: Layout) -> None:
    rebuild(layout)
