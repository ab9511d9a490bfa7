"""Cursors that carry ids taken from the files (list_windows: the first and last item of the
window being accumulated; read_item: the item's window id). Row ids are foreign data: a lone
surrogate (a ``\\ud800`` escape a JavaScript writer can leave) or characters that serialize
to several bytes each must neither crash the tool nor make a cursor that the next call
refuses or that pushes the result past 16 KiB (R24, R26)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.retrieval.helpers import entries, pages, rollover, text_row, write_history
from xum.messages import encode_row, row_to_obj
from xum.retrieval import SessionHistoryTool
from xum.workspace import Layout


def _line(obj: dict[str, Any]) -> bytes:
    # ensure_ascii keeps a lone surrogate as the escape a JavaScript writer leaves on disk
    return json.dumps(obj, separators=(",", ":")).encode("ascii")


def _unsequenced(obj: dict[str, Any], row_id: str) -> dict[str, Any]:
    obj["metadata"].pop("historySequence", None)
    obj["id"] = row_id
    return obj


def test_lone_surrogate_ids_in_cursors(xum_home: Path) -> None:
    layout = Layout(xum_home, "sur")
    boundary = _unsequenced(row_to_obj(rollover(1)), "\ud800bnd")
    notes = [
        _unsequenced(row_to_obj(text_row(f"note {i}", None)), f"\udc00it{i}") for i in range(3)
    ]
    lines = [
        encode_row(text_row("root", 0)),
        _line(boundary),
        encode_row(text_row("x" * 20_000, 9)),  # paged by read_item inside that window
        *(_line(o) for o in notes),
        encode_row(rollover(8)),
    ]
    write_history(layout, [], lines)
    tool = SessionHistoryTool(layout)

    read = list(pages(tool, {"action": "read_item", "item_id": "9", "limit_chars": 5000}))
    assert all(p["ok"] for p in read), read[-1]
    assert "".join(p["items"][0]["text"] for p in read) == "x" * 20_000
    assert {p["items"][0]["windowId"] for p in read} == {"w:m:\ud800bnd"}

    windows = entries(tool, {"action": "list_windows", "limit": 1})
    assert [(w["windowId"], w["items"]) for w in windows] == [
        ("w:8", 0),
        ("w:m:\ud800bnd", 4),
        ("w:0", 1),
    ]
    assert windows[1]["firstItemId"] == "9"
    assert windows[1]["lastItemId"] == "m:\udc00it2"
