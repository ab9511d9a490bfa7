"""People-facing views: projection, windows, items, search and exports over fixture rows.

``session_rows()`` is the project's own fixture session (also used by the CLI tests): a root
window with a tool call, reasoning and media; a rollover with its lead-in, a budget warning and
a quarantined input; a manual reset; a compaction.
"""

from __future__ import annotations

import html
import json
from typing import Any

import pytest

from segue import Part, Row, UsageError, make_row
from segue._context.rollover import manual_reset_row, quarantined, rollover_batch, warning_row
from segue._messages import row_to_obj, with_metadata
from segue._views.export import export, export_html, export_json, export_markdown
from segue._views.project import MEDIA_OMITTED, display, is_hidden
from segue._views.windows import Item, find_items, search, walk, window_items, window_summaries

T0 = 1_700_000_010_000
SECRET_PASTE = "PASTED-LOG <script>alert('x')</script> " + "line of a huge log\n" * 3


def session_rows(*, with_sequences: bool = True) -> list[Row]:
    """A realistic session, oldest first; sequences 0.. when ``with_sequences``."""
    rows: list[Row] = [
        make_row("user", "Which file holds the entry point?", id="u1", metadata={"timestamp": T0}),
        make_row(
            "assistant",
            "Let me look at the tree.",
            id="a1",
            parts=[
                Part(type="reasoning", text="PRIVATE-THOUGHT about layout", state="done"),
                Part(
                    type="dynamic-tool",
                    toolCallId="call-1",
                    toolName="bash",
                    input={"command": "ls src"},
                    state="output-available",
                    output="main.py\npreload.py",
                ),
            ],
            metadata={"timestamp": T0 + 1000, "model": "openai:gpt-4o"},
        ),
        make_row(
            "user",
            "Here is a screenshot.",
            id="u2",
            parts=[Part(type="file", mediaType="image/png", url="data:image/png;base64,AAAA")],
            metadata={"timestamp": T0 + 2000},
        ),
        make_row(
            "assistant",
            "The entry point is src/main.py.",
            id="a2",
            metadata={"timestamp": T0 + 3000},
        ),
        *rollover_batch(
            ids=("b1", "lead1", "cont1"),
            rollover_id="r1",
            reason="on-send",
            new_window_id="w:4",
            previous_window_id="w:0",
            context_tokens=90_000,
            max_tokens=128_000,
            trigger=make_row(
                "user", "Now run the linter.", id="u3", metadata={"timestamp": T0 + 4000}
            ),
            now_ms=T0 + 4000,
        ),
        warning_row(
            row_id="warn1",
            now_ms=T0 + 5000,
            percent=60,
            label="Rolls over by 75%",
            context_tokens=76_800,
            max_tokens=128_000,
            budget_tokens=96_000,
        ),
        quarantined(make_row("user", SECRET_PASTE, id="u4", metadata={"timestamp": T0 + 6000})),
        make_row(
            "assistant", "Lint passed with no findings.", id="a3", metadata={"timestamp": T0 + 7000}
        ),
        manual_reset_row(row_id="clear1", now_ms=T0 + 8000),
        make_row(
            "user", "Start over: write the README.", id="u5", metadata={"timestamp": T0 + 9000}
        ),
        make_row(
            "assistant",
            "Summary: the README was drafted.",
            id="sum1",
            metadata={
                "timestamp": T0 + 10_000,
                "compactionBoundary": True,
                "compacted": "user",
                "compactionEpoch": 1,
            },
        ),
        make_row(
            "assistant",
            "Continuing after the summary.",
            id="a4",
            metadata={"timestamp": T0 + 11_000},
        ),
    ]
    if with_sequences:
        rows = [with_metadata(r, historySequence=i) for i, r in enumerate(rows)]
    return rows


def test_projection_hides_reasoning_summarizes_tools_and_media() -> None:
    rows = session_rows()
    view = display(rows[1])
    assert "PRIVATE-THOUGHT" not in view.text
    assert '[tool bash] {"command":"ls src"}' in view.text
    assert "main.py\npreload.py" in view.text
    assert display(rows[2]).text == f"Here is a screenshot.\n{MEDIA_OMITTED}"
    assert "base64" not in display(rows[2]).text


def test_quarantined_row_shows_its_rejected_original() -> None:
    row = session_rows()[8]
    assert row.role == "assistant" and not row.parts
    assert not is_hidden(row)
    view = display(row)
    assert view.rejected and view.role == "user"
    assert "[rejected" in view.text and "PASTED-LOG" in view.text


def test_machine_rows_are_labelled_segue_and_machinery_is_hidden() -> None:
    rows = session_rows()
    assert display(rows[7]).label == "segue"  # budget warning, never the human's words
    assert display(rows[6]).label == "user"  # the real trigger
    assert [is_hidden(r) for r in rows[4:6]] == [True, True]  # boundary, lead-in
    assert is_hidden(rows[10])  # manual reset
    assert is_hidden(make_row("assistant", id="empty"))


def test_windows_from_one_pass() -> None:
    summaries = window_summaries(session_rows())
    assert [s.to_obj() for s in summaries] == [
        {"windowId": "w:0", "kind": "root", "firstItemId": "0", "lastItemId": "3", "items": 4},
        {"windowId": "w:4", "kind": "rollover", "firstItemId": "6", "lastItemId": "9", "items": 4},
        {"windowId": "w:10", "kind": "reset", "firstItemId": "11", "lastItemId": "11", "items": 1},
        {
            "windowId": "w:12",
            "kind": "compaction",
            "firstItemId": "12",
            "lastItemId": "13",
            "items": 2,
        },
    ]


def test_window_ids_without_sequences_use_row_ids() -> None:
    ids = [s.window_id for s in window_summaries(session_rows(with_sequences=False))]
    assert ids == ["w:0", "w:m:b1", "w:m:clear1", "w:m:sum1"]


def test_empty_history_has_an_empty_root_window() -> None:
    assert [s.to_obj() for s in window_summaries([])] == [
        {"windowId": "w:0", "kind": "root", "firstItemId": None, "lastItemId": None, "items": 0}
    ]


def test_window_items_and_item_objects() -> None:
    items = window_items(session_rows(), "w:4")
    assert items is not None
    objs = [i.to_obj() for i in items]
    assert [o["itemId"] for o in objs] == ["6", "7", "8", "9"]
    assert objs[0] == {
        "itemId": "6",
        "windowId": "w:4",
        "role": "user",
        "timestamp": T0 + 4000,
        "text": "Now run the linter.",
    }
    assert objs[2]["role"] == "user" and "PASTED-LOG" in objs[2]["text"]
    assert window_items(session_rows(), "w:99") is None
    with pytest.raises(UsageError, match="invalid window id"):
        window_items(session_rows(), "window-4")


def test_reused_sequences_are_both_shown() -> None:
    rows = session_rows()
    dup = with_metadata(make_row("user", "replayed", id="dup"), historySequence=3)
    found = find_items([*rows, dup], "3")
    assert [i.row.id for i in found] == ["a2", "dup"]


def test_search_is_literal_case_insensitive_and_covers_every_window() -> None:
    rows = session_rows()
    hits = list(search(rows, "ENTRY POINT"))
    assert [h.item.item_id for h in hits] == ["0", "3"]
    assert list(search(rows, "a.b")) == []  # literal, not a regex
    assert [h.item.item_id for h in search(rows, "pasted-log")] == ["8"]
    assert [h.matches for h in search(rows, "line of a huge log")] == [3]
    with pytest.raises(UsageError):
        list(search(rows, ""))


def test_search_snippet_keeps_code_points_whole() -> None:
    text = "🙂" * 100 + "needle" + "é" * 100
    row = with_metadata(make_row("user", text, id="x"), historySequence=0)
    (hit,) = search([row], "NEEDLE")
    assert "needle" in hit.snippet
    assert hit.snippet.startswith("…🙂") and hit.snippet.endswith("é…")


def test_markdown_export_has_dividers_and_every_window() -> None:
    md = "".join(export_markdown(session_rows(), "demo"))
    assert md.count("Context window rollover") == 1
    assert "Context reset · w:10" in md and "Context compacted · w:12" in md
    assert md.index("entry point is src/main.py") < md.index("Context window rollover")
    assert md.index("Context window rollover") < md.index("Now run the linter.")
    assert "[segue] This conversation continues" not in md  # lead-in hidden
    assert "PRIVATE-THOUGHT" not in md
    assert "user (rejected)" in md and "PASTED-LOG" in md
    assert "```\nmain.py\npreload.py\n```" in md


def test_markdown_fence_outgrows_backticks_in_tool_output() -> None:
    part = Part(
        type="dynamic-tool",
        toolCallId="c",
        toolName="bash",
        input={},
        state="output-available",
        output="```py\nx\n```",
    )
    row = with_metadata(make_row("assistant", id="a", parts=[part]), historySequence=0)
    assert "````\n```py\nx\n```\n````" in "".join(export_markdown([row], "demo"))


def test_html_export_is_escaped_and_self_contained() -> None:
    page = "".join(export_html(session_rows(), "demo<&>"))
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "<script>" not in page
    assert html.escape("<script>alert('x')</script>") in page
    assert "demo&lt;&amp;&gt;" in page
    assert 'data-kind="rollover">Context window rollover' in page
    assert "src=" not in page and "href=" not in page


def test_json_export_has_windows_and_rows_as_stored() -> None:
    rows = session_rows()
    doc: dict[str, Any] = json.loads("".join(export_json(lambda: rows, "demo")))
    assert doc["format"] == "segue-history-export-1" and doc["workspaceId"] == "demo"
    assert doc["rows"] == [row_to_obj(r) for r in rows]
    assert [w["windowId"] for w in doc["windows"]] == ["w:0", "w:4", "w:10", "w:12"]
    empty: dict[str, Any] = json.loads("".join(export("json", lambda: [], "demo")))
    assert empty["rows"] == [] and len(empty["windows"]) == 1


def test_walk_is_lazy() -> None:
    """The walk pulls rows one by one: it works on an endless stream."""

    def endless() -> Any:
        n = 0
        while True:
            yield with_metadata(make_row("user", f"msg {n}", id=f"u{n}"), historySequence=n)
            n += 1

    events = walk(endless())
    first = [next(events) for _ in range(3)]
    assert isinstance(first[2], Item) and first[2].item_id == "1"
