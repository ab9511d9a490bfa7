from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from segue import Part, Row, decode_row, encode_row, make_row
from segue._errors import RowDecodeError
from segue._messages import with_metadata
from tests.needs import require

SAMPLE = Path(__file__).resolve().parents[2] / "shared" / "samples" / "xum-session" / "chat.jsonl"

FIXTURE_ROWS = [
    b'{"id":"user-1","role":"user","metadata":{"timestamp":1700000010000,"historySequence":0},'
    b'"parts":[{"type":"text","text":"Hello","state":"done"}],"workspaceId":"demo"}',
    b'{"id":"a-1","role":"assistant","metadata":{"historySequence":1,"usage":{"inputTokens":5},'
    b'"providerMetadata":{"x":{"y":1}},"newField":[1,2]},"parts":[{"type":"reasoning","text":"hm",'
    b'"providerOptions":{"z":true}},{"type":"dynamic-tool","toolCallId":"c1","toolName":"bash",'
    b'"input":{"cmd":"ls"},"state":"output-available","output":{"stdout":"a\\n"}}],'
    b'"workspaceId":"demo","topLevelUnknown":{"k":null}}',
]


@pytest.mark.parametrize("line", FIXTURE_ROWS)
def test_fixture_rows_round_trip(line: bytes) -> None:
    row = decode_row(line)
    assert json.loads(encode_row(row)) == json.loads(line)


def test_real_segue_rows_round_trip() -> None:
    require(SAMPLE.exists(), f"the shared Xum sample is not at {SAMPLE}")
    for line in SAMPLE.read_bytes().splitlines():
        row = decode_row(line)
        assert row.sequence is not None
        assert json.loads(encode_row(row)) == json.loads(line)


def test_typed_views() -> None:
    row = decode_row(FIXTURE_ROWS[1])
    assert row.sequence == 1
    assert row.role == "assistant"
    assert row.parts[1].toolName == "bash"
    assert row.parts[0].extra == {"providerOptions": {"z": True}}
    bad = with_metadata(row, historySequence="7")
    assert bad.sequence is None  # wrong type reads as absent, the row itself survives


@pytest.mark.parametrize(
    "line",
    [
        b"",
        b"not json",
        b"[1,2]",
        b'{"id":1,"role":"user","parts":[],"metadata":{}}',
        b'{"id":"x","role":"robot","parts":[],"metadata":{}}',
        b'{"id":"x","role":"user","parts":{},"metadata":{}}',
        b'{"id":"x","role":"user","parts":[{"text":"no type"}],"metadata":{}}',
        b'{"id":"x","role":"user","parts":[],"metadata":[]}',
        b'{"id":"x","role":"user","parts":[],"metadata":{},"text":"\xff\xfe"}',
        b'{"id":"x","role":"user"',
    ],
)
def test_bad_lines_raise_clear_error(line: bytes) -> None:
    with pytest.raises(RowDecodeError):
        decode_row(line)


def test_lone_surrogate_round_trips_as_escape() -> None:
    line = b'{"id":"x","role":"user","parts":[{"type":"text","text":"a\\ud800b"}],"metadata":{}}'
    row = decode_row(line)
    assert row.text == "a\ud800b"
    out = encode_row(row)
    out.decode("utf-8")  # always valid UTF-8
    assert decode_row(out) == row


json_values: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)
extra_keys = st.text().filter(lambda k: k not in {"type", "text", "state", "input", "output"})


@st.composite
def rows(draw: st.DrawFn) -> Row:
    parts = draw(
        st.lists(
            st.builds(
                Part,
                type=st.sampled_from(["text", "reasoning", "file", "dynamic-tool", "x-new"]),
                text=st.none() | st.text(),
                input=json_values,
                extra=st.dictionaries(
                    extra_keys.filter(lambda k: k not in {"mediaType", "url", "filename"}),
                    json_values,
                    max_size=2,
                ).filter(lambda d: not any(k in d for k in ("toolCallId", "toolName"))),
            ),
            max_size=4,
        )
    )
    return make_row(
        draw(st.sampled_from(["user", "assistant", "system"])),
        id=draw(st.text(min_size=1)),
        parts=parts,
        metadata=draw(st.dictionaries(st.text(), json_values, max_size=4)),
        workspace_id=draw(st.none() | st.text()),
    )


@given(rows())
def test_codec_round_trip_property(row: Row) -> None:
    encoded = encode_row(row)
    encoded.decode("utf-8")
    assert b"\n" not in encoded
    again = decode_row(encoded)
    assert json.loads(encode_row(again)) == json.loads(encoded)
    assert again.text == row.text
    assert again.metadata == row.metadata
