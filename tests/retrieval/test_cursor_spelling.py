"""A cursor has one spelling (R26, SPEC.md §4): any other string that base64 would decode to
the same bytes — ``=`` padding, the standard alphabet's ``+``/``/``, stray characters the
decoder skips, other unused trailing bits — is a tampered cursor (``invalid_cursor``), and the
issued cursor still works afterwards."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from segue._messages import encode_row
from segue._retrieval import SessionHistoryTool
from segue._workspace import Layout
from tests.retrieval.helpers import call, text_row, write_history

ARGS: dict[str, Any] = {"action": "search", "query": "needle", "limit": 1}


@pytest.fixture(scope="module")
def paged(tmp_path_factory: pytest.TempPathFactory) -> tuple[SessionHistoryTool, str]:
    layout = Layout(tmp_path_factory.mktemp("home"), "ws")
    write_history(layout, [], [encode_row(text_row(f"needle {i}", i)) for i in range(3)])
    tool = SessionHistoryTool(layout, use_index=False)
    first = call(tool, ARGS)
    assert first["ok"] and first["nextCursor"], first
    return tool, str(first["nextCursor"])


def _same_bytes_spellings(cursor: str) -> list[str]:
    parts = cursor.split(".")
    out: list[str] = [cursor + "=", cursor + "==", cursor + "\n", " " + cursor]
    for i, part in enumerate(parts):
        def with_part(new: str, i: int = i) -> str:
            return ".".join([*parts[:i], new, *parts[i + 1 :]])

        out.append(with_part(part + "=" * (-len(part) % 4 or 4)))
        out.append(with_part(part.replace("-", "+").replace("_", "/")))
        out.append(with_part(part[:1] + "!" + part[1:]))
        # the last character carries unused low bits: other values decode to the same bytes
        alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
        last = alphabet.index(part[-1])
        spare = {1: 0, 2: 4, 3: 2}.get(len(part) % 4, 0)  # unused bits of the final symbol
        for low in range(1, 1 << spare):
            out.append(with_part(part[:-1] + alphabet[(last & ~((1 << spare) - 1)) | low]))
    return [s for s in dict.fromkeys(out) if s != cursor]


def test_every_other_spelling_is_tampered(paged: tuple[SessionHistoryTool, str]) -> None:
    tool, cursor = paged
    spellings = _same_bytes_spellings(cursor)
    assert len(spellings) >= 12
    for spelling in spellings:
        got = call(tool, {**ARGS, "cursor": spelling})
        assert got["ok"] is False and got["error"]["code"] == "invalid_cursor", (spelling, got)
    again = call(tool, {**ARGS, "cursor": cursor})
    assert again["ok"] and again["items"], again


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_any_edit_of_a_cursor_is_rejected(
    paged: tuple[SessionHistoryTool, str], data: st.DataObject
) -> None:
    tool, cursor = paged
    at = data.draw(st.integers(0, len(cursor)))
    cut = data.draw(st.integers(0, 2))
    insert = data.draw(st.text(alphabet="=+/-_.!A \n", max_size=3))
    edited = cursor[:at] + insert + cursor[at + cut :]
    if edited == cursor:
        return
    got = call(tool, {**ARGS, "cursor": edited})
    assert got["ok"] is False and got["error"]["code"] in ("invalid_cursor", "stale_cursor")
