"""Agents SDK items survive the trip through a row and its JSONL line verbatim, whatever
they hold, and the row always has a shape segue's views and the look-back read."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from segue._messages import decode_row, encode_row
from segue.integrations._agents_rows import OPAQUE_PART, batch_rows, item_row, row_items

json_scalars = st.none() | st.booleans() | st.integers() | st.text()
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
text_piece = st.fixed_dictionaries(
    {"type": st.sampled_from(["input_text", "output_text"]), "text": st.text()}
)
content = st.text() | st.lists(text_piece, max_size=3)
items = st.one_of(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "assistant", "system", "developer"]), "content": content}
    ),
    st.fixed_dictionaries(
        {
            "type": st.just("function_call"),
            "call_id": st.text(min_size=1),
            "name": st.text(),
            "arguments": st.text(),
        }
    ),
    st.fixed_dictionaries(
        {"type": st.just("function_call_output"), "call_id": st.text(), "output": json_values}
    ),
    st.dictionaries(st.text(), json_values, max_size=5).map(
        lambda extra: {**extra, "type": "hosted_thing"}
    ),
)


@settings(max_examples=150, deadline=None)
@given(items)
def test_an_item_round_trips_verbatim(item: dict[str, Any]) -> None:
    row = item_row(item, row_id="r1", now_ms=1, calls={})
    stored = decode_row(encode_row(row))
    assert row_items(stored) == [item]
    assert stored.parts, "a row is never empty (an empty assistant row is never replayed)"
    if item.get("type") == "hosted_thing":
        assert stored.role == "assistant" and stored.parts[0].type == OPAQUE_PART


def test_an_output_carries_its_call() -> None:
    call = {"type": "function_call", "call_id": "c1", "name": "grep", "arguments": '{"q": "x"}'}
    output = {"type": "function_call_output", "call_id": "c1", "output": "3 matches"}
    row = item_row(output, row_id="r2", now_ms=1, calls={"c1": ("grep", {"q": "x"})})
    (part,) = row.parts
    assert (part.toolName, part.input, part.state, part.output) == (
        "grep",
        {"q": "x"},
        "output-available",
        "3 matches",
    )
    assert item_row(call, row_id="r1", now_ms=1, calls={}).parts[0].state == "input-available"


call_ids = st.sampled_from(["c1", "c2", "c3"])
tool_items = st.one_of(
    st.builds(
        lambda cid, name: {"type": "function_call", "call_id": cid, "name": name, "arguments": ""},
        call_ids,
        st.sampled_from(["grep", "read"]),
    ),
    st.builds(
        lambda cid, out: {"type": "function_call_output", "call_id": cid, "output": out},
        call_ids,
        json_values,
    ),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(items, tool_items), max_size=8))
def test_a_batch_round_trips_in_order_with_its_calls_settled(batch: list[dict[str, Any]]) -> None:
    ids = iter(range(1000))
    rows = batch_rows(batch, new_id=lambda: f"r{next(ids)}", now_ms=1, calls={})
    stored = [decode_row(encode_row(r)) for r in rows]
    assert [i for r in stored for i in row_items(r)] == batch  # verbatim, in order
    for row in stored:
        assert row.parts
        held = row_items(row)
        outputs = {i["call_id"] for i in held if i.get("type") == "function_call_output"}
        tools = [p for p in row.parts if p.type == "dynamic-tool"]
        # Every output stored settles a call; a call is open only when no output answers it.
        assert outputs <= {p.toolCallId for p in tools if p.state == "output-available"}
        assert all(p.toolCallId not in outputs for p in tools if p.state == "input-available")
