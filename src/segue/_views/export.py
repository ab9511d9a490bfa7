"""Exports of a whole transcript: Markdown, self-contained HTML, and JSON.

Every exporter is a generator of text chunks over an iterable of rows, so a history of any
size is exported in one forward pass with bounded memory (JSON makes two passes: windows
first, then the rows as stored). Earlier windows are always included (R1: turning the
experiment off removes retrieval, never retention), and a divider marks where each window
began — "Context window rollover" for a rollover (R9).

HTML output escapes every piece of transcript text and has no external resources (no scripts,
no links to fetch), so an exported transcript is safe to open.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from typing import Literal

from segue._context.boundaries import WindowKind
from segue._messages import CODEC_VERSION, Row, encode_obj, row_to_obj
from segue._views.project import Segment
from segue._views.windows import Item, WindowStart, walk, window_summaries

ExportFormat = Literal["md", "json", "html"]
FORMATS: tuple[ExportFormat, ...] = ("md", "json", "html")
#: Versioned so that a reader can tell this layout from a later one.
JSON_FORMAT = "segue-history-export-1"

DIVIDERS: dict[WindowKind, str] = {
    "root": "",
    "rollover": "Context window rollover",
    "reset": "Context reset",
    "compaction": "Context compacted",
}


def format_timestamp(ms: int | None) -> str:
    if ms is None:
        return "no time"
    try:
        return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError):
        return f"{ms} ms"


def divider_text(start: WindowStart) -> str:
    return f"{DIVIDERS[start.kind]} · {start.window_id}"


def item_heading(item: Item) -> str:
    label = item.view.label + (" (rejected)" if item.view.rejected else "")
    return f"{label} · #{item.item_id} · {format_timestamp(item.row.timestamp)}"


# -- Markdown --------------------------------------------------------------------------------


def _fence(text: str) -> str:
    """A backtick fence longer than any run of backticks inside ``text``."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _md_segment(segment: Segment) -> str:
    if segment.kind in ("tool", "output"):
        fence = _fence(segment.text)
        return f"{fence}\n{segment.text}\n{fence}\n"
    if segment.kind in ("note", "media"):
        return f"*{segment.text}*\n"
    return segment.text + "\n"


def export_markdown(rows: Iterable[Row], workspace_id: str) -> Iterator[str]:
    yield f"# segue transcript: {workspace_id}\n"
    for event in walk(rows):
        if isinstance(event, WindowStart):
            if event.kind != "root":
                yield f"\n---\n\n**— {divider_text(event)} —**\n\n---\n"
            continue
        yield f"\n### {item_heading(event)}\n\n"
        for segment in event.view.segments:
            yield _md_segment(segment)


# -- HTML ------------------------------------------------------------------------------------

_CSS = """
body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
.item{border-left:3px solid #ccc;padding:.2rem .8rem;margin:1rem 0}
.user{border-color:#3a7bd5}.assistant{border-color:#2e8b57}.system,.segue{border-color:#999}
.rejected{border-color:#c0392b;background:#fdf0ee}
.head{font-size:.85rem;color:#666}
pre{background:#f5f5f5;padding:.5rem;overflow-x:auto;white-space:pre-wrap}
.text{white-space:pre-wrap}
.note{font-style:italic;color:#666}
.divider{text-align:center;margin:2rem 0;color:#555;border-top:2px dashed #aaa;padding-top:.5rem}
"""


def _html_segment(segment: Segment) -> str:
    body = html.escape(segment.text)
    if segment.kind in ("tool", "output"):
        return f'<pre class="{segment.kind}">{body}</pre>\n'
    if segment.kind in ("note", "media"):
        return f'<p class="note">{body}</p>\n'
    return f'<div class="text">{body}</div>\n'


def export_html(rows: Iterable[Row], workspace_id: str) -> Iterator[str]:
    title = html.escape(f"segue transcript: {workspace_id}")
    yield (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{title}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n<h1>{title}</h1>\n"
    )
    for event in walk(rows):
        if isinstance(event, WindowStart):
            if event.kind != "root":
                yield (
                    f'<div class="divider" data-kind="{event.kind}">'
                    f"{html.escape(divider_text(event))}</div>\n"
                )
            continue
        classes = event.view.label + (" rejected" if event.view.rejected else "")
        yield (
            f'<section class="item {classes}" id="item-{html.escape(event.item_id, quote=True)}">'
            f'\n<div class="head">{html.escape(item_heading(event))}</div>\n'
        )
        for segment in event.view.segments:
            yield _html_segment(segment)
        yield "</section>\n"
    yield "</body>\n</html>\n"


# -- JSON ------------------------------------------------------------------------------------


def export_json(rows: Callable[[], Iterable[Row]], workspace_id: str) -> Iterator[str]:
    """``{"format", "codec", "workspaceId", "windows": [...], "rows": [...]}``: the window
    objects, then every row as stored (one per line inside the array). ``rows`` is called twice
    (windows first, then rows) so neither pass holds the history in memory."""

    def dump(value: object) -> str:
        return encode_obj(value).decode("utf-8")

    yield (
        f'{{"format":{dump(JSON_FORMAT)},"codec":{dump(CODEC_VERSION)},'
        f'"workspaceId":{dump(workspace_id)},\n"windows":[\n'
    )
    for index, summary in enumerate(window_summaries(rows())):
        yield ("" if index == 0 else ",\n") + dump(summary.to_obj())
    yield '\n],\n"rows":[\n'
    for index, row in enumerate(rows()):
        yield ("" if index == 0 else ",\n") + dump(row_to_obj(row))
    yield "\n]}\n"


def export(
    fmt: ExportFormat, rows: Callable[[], Iterable[Row]], workspace_id: str
) -> Iterator[str]:
    if fmt == "md":
        return export_markdown(rows(), workspace_id)
    if fmt == "html":
        return export_html(rows(), workspace_id)
    return export_json(rows, workspace_id)
