"""Property: a row with any field of SPEC.md §3 replaced by any JSON type (a deep nesting
included) never crashes a reader. Every reader segue has is fed the line: the codec, the
import parser, the windows/items/search/read views, the three exports, the store's scans and
verify, the engine's window split and floor, and ``session_history``. The line is either a
row or an unparseable line (skipped, reported by verify), never an exception."""

from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from segue import HistoryStore, Layout, SessionHistoryTool, decode_row
from segue._context.boundaries import newest_floor_index, split_windows
from segue._errors import RowDecodeError
from segue._history.batch import parse_import
from segue._views.export import export
from segue._views.windows import find_items, search, window_items, window_summaries

MUX_ROLLOVER = {
    "type": "context-window-rollover",
    "rolloverId": "ro1",
    "reason": "on-send",
    "previousWindowId": "w:0",
    "flushOpportunity": True,
    "contextTokens": 900,
    "maxTokens": 1000,
    "requestedBy": "model",
}
TEMPLATES: list[dict[str, Any]] = [
    {
        "id": "u",
        "role": "user",
        "parts": [{"type": "text", "text": "hello", "state": "done"}],
        "metadata": {"timestamp": 1, "historySequence": 1, "model": "m", "agentId": "exec"},
        "workspaceId": "ws",
    },
    {
        "id": "t",
        "role": "assistant",
        "parts": [
            {"type": "reasoning", "text": "hm"},
            {
                "type": "dynamic-tool",
                "toolCallId": "c1",
                "toolName": "bash",
                "input": {"cmd": "ls"},
                "state": "output-available",
                "output": {"stdout": "x"},
            },
            {"type": "file", "mediaType": "image/png", "url": "data:x", "filename": "a.png"},
        ],
        "metadata": {"timestamp": 2, "historySequence": 2, "usage": {"inputTokens": 3}},
    },
    {
        "id": "b",
        "role": "assistant",
        "parts": [],
        "metadata": {
            "timestamp": 3,
            "historySequence": 3,
            "contextBoundaryKind": "reset",
            "rolloverId": "ro1",
            "muxMetadata": MUX_ROLLOVER,
        },
    },
    {
        "id": "l",
        "role": "user",
        "parts": [{"type": "text", "text": "lead-in"}],
        "metadata": {
            "historySequence": 4,
            "synthetic": True,
            "uiVisible": False,
            "muxMetadata": {"type": "context-window-lead-in", "rolloverId": "ro1"},
        },
    },
    {
        "id": "q",
        "role": "assistant",
        "parts": [],
        "metadata": {
            "historySequence": 5,
            "synthetic": True,
            "uiVisible": False,
            "partial": False,
            "contextBudgetRejected": True,
            "contextBudgetRejectedMessage": {
                "role": "user",
                "parts": [{"type": "text", "text": "too big"}],
                "metadata": {"timestamp": 5},
            },
        },
    },
    {
        "id": "c",
        "role": "assistant",
        "parts": [{"type": "text", "text": "summary"}],
        "metadata": {
            "historySequence": 6,
            "compactionBoundary": True,
            "compacted": "idle",
            "compactionEpoch": 1,
        },
    },
    {
        "id": "w",
        "role": "user",
        "parts": [{"type": "text", "text": "warning"}],
        "metadata": {
            "historySequence": 7,
            "synthetic": True,
            "uiVisible": True,
            "muxMetadata": {
                "type": "context-budget-warning",
                "contextTokens": 1,
                "maxTokens": 2,
                "budgetTokens": 3,
                "contextBudgetContinuation": True,
            },
        },
    },
]

ROW_FIELDS = ["id", "role", "parts", "metadata", "workspaceId"]
META_FIELDS = [
    "historySequence", "timestamp", "model", "agentId", "usage", "synthetic", "uiVisible",
    "partial", "contextBoundaryKind", "compactionBoundary", "compacted", "compactionEpoch",
    "rolloverId", "muxMetadata", "contextBudgetRejected", "contextBudgetRejectedMessage",
]  # fmt: skip
MUX_FIELDS = [*MUX_ROLLOVER, "budgetTokens", "contextBudgetContinuation"]
PART_FIELDS = [
    "type", "text", "state", "mediaType", "url", "filename", "toolCallId", "toolName",
    "input", "output",
]  # fmt: skip
PATHS: list[tuple[Any, ...]] = [
    *[(f,) for f in ROW_FIELDS],
    *[("metadata", f) for f in META_FIELDS],
    *[("metadata", "muxMetadata", f) for f in MUX_FIELDS],
    *[("parts", 0, f) for f in PART_FIELDS],
    *[("parts", 1, f) for f in PART_FIELDS],
    *[("metadata", "contextBudgetRejectedMessage", f) for f in ("role", "parts", "metadata")],
    ("parts", 0),
    ("parts", 1),
]


def _deep(levels: int) -> Any:
    value: Any = []
    for _ in range(levels):
        value = [value]
    return value


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
    st.sampled_from(["user", "assistant", "system", "reset", "text", "dynamic-tool", ""]),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
#: deep nesting as raw JSON text, on both sides of MAX_NESTING and past every decoder
deep = st.sampled_from([100, 129, 900, 1200, 5000])


def _set(obj: Any, path: tuple[Any, ...], value: Any) -> None:
    for key in path[:-1]:
        if isinstance(obj, dict):
            obj = obj.setdefault(key, {})
        elif isinstance(obj, list) and isinstance(key, int) and key < len(obj):
            obj = obj[key]
        else:
            return
    last = path[-1]
    if isinstance(obj, dict) or (
        isinstance(obj, list) and isinstance(last, int) and last < len(obj)
    ):
        obj[last] = value


def _line(template: int, path: tuple[Any, ...], value: Any, depth: int | None) -> bytes:
    obj = copy.deepcopy(TEMPLATES[template])
    marker = "\x00DEEP\x00"
    _set(obj, path, marker if depth is not None else value)
    text = json.dumps(obj)
    if depth is not None:
        text = text.replace(json.dumps(marker), "[" * depth + "]" * depth)
    return text.encode()


def _read_everything(home: Path, line: bytes) -> None:
    layout = Layout(home, "ws")
    layout.session_dir.mkdir(parents=True)
    before = json.dumps(TEMPLATES[0] | {"id": "first"}).encode()
    after = json.dumps(TEMPLATES[0] | {"id": "last"}).encode()
    layout.chat.write_bytes(before + b"\n" + line + b"\n" + after + b"\n")
    try:
        parsed = decode_row(line)
    except RowDecodeError:
        parsed = None
    try:
        parse_import(before + b"\n" + line + b"\n")
    except RowDecodeError:
        assert parsed is None
    store = HistoryStore(layout, durable=False)
    rows = list(store.rows(max_line=None))
    assert len(rows) == (3 if parsed is not None else 2)
    summaries = window_summaries(rows)
    for s in summaries:
        window_items(rows, s.window_id)
    find_items(rows, "1")
    list(search(rows, "e"))
    for fmt in ("md", "html", "json"):
        "".join(export(fmt, lambda: iter(rows), "ws"))
    split_windows(rows)
    newest_floor_index(rows)
    report = store.verify()
    assert sum("not a row" in w for w in report.warnings) == (0 if parsed is not None else 1)
    tool = SessionHistoryTool(layout)
    calls: list[dict[str, Any]] = [
        {"action": "list_windows"},
        {"action": "search", "query": "e"},
        {"action": "list_items", "window_id": summaries[-1].window_id},
        {"action": "read_item", "item_id": "1"},
    ]
    for call in calls:
        answer = tool.call(call)
        assert isinstance(answer.get("ok"), bool)
        assert len(json.dumps(answer)) <= 16 * 1024


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    template=st.integers(min_value=0, max_value=len(TEMPLATES) - 1),
    path=st.sampled_from(PATHS),
    value=json_values,
    depth=st.one_of(st.none(), deep),
)
def test_every_reader_survives_a_mistyped_field(
    template: int, path: tuple[Any, ...], value: Any, depth: int | None
) -> None:
    line = _line(template, path, value, depth)
    with tempfile.TemporaryDirectory() as tmp:
        _read_everything(Path(tmp), line)


#: one value of every JSON type, and nesting past every decoder's limit
EVERY_TYPE: list[tuple[Any, int | None]] = [
    (None, None), (True, None), (7, None), (2**70, None), (1.5, None), ("s", None),
    ([1, "x"], None), ({"k": {"type": 1}}, None), ([], None), ({}, None), (None, 120),
    (None, 900), (None, 1200),
]  # fmt: skip


def _has_parent(template: dict[str, Any], path: tuple[Any, ...]) -> bool:
    obj: Any = template
    for key in path[:-1]:
        inside_dict = isinstance(obj, dict) and key in obj
        inside_list = isinstance(obj, list) and isinstance(key, int) and key < len(obj)
        if not (inside_dict or inside_list):
            return False
        obj = obj[key]
    return True


def _templates_for(path: tuple[Any, ...]) -> list[int]:
    """The first template in which the field's parent exists (so the field really is set),
    and the rollover boundary too where it has that parent: its validation is the one that
    decides floors (R11)."""
    found = [i for i, t in enumerate(TEMPLATES) if _has_parent(t, path)]
    first = found[:1] or [0]
    return first + ([2] if 2 in found and first != [2] else [])


def test_every_field_with_every_json_type() -> None:
    """The exhaustive half: each field of §3, in a row where it means something, set to a
    value of each JSON type in turn."""
    with tempfile.TemporaryDirectory() as tmp:
        for n, path in enumerate(PATHS):
            for template in _templates_for(path):
                for m, (value, depth) in enumerate(EVERY_TYPE):
                    line = _line(template, path, value, depth)
                    _read_everything(Path(tmp) / f"{n}-{template}-{m}", line)
