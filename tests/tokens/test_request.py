"""Whole-request counting over rows: R19 media rules, R20 advertised tools, memo, ceiling."""

from __future__ import annotations

import base64
import json
import random
from typing import Any

import pytest

from segue import Part, Row, count_request, count_text, make_row, resolve_model
from segue._tokens import allowances as allow
from segue._tokens import approximate_request, count_row, encodings
from segue._tokens.request import RequestCounter

GPT = "openai:gpt-4o"
PNG = "data:image/png;base64," + base64.b64encode(random.Random(7).randbytes(6000)).decode()


def text_tokens(text: str) -> int:
    return len(encodings.get("o200k_base").encode_ordinary(text))


def tool_part(input: Any = None, output: Any = None) -> Part:
    return Part(
        type="dynamic-tool",
        toolCallId="call-1",
        toolName="file_read",
        input=input,
        output=output,
        state="output-available",
    )


def row(*parts: Part, role: Any = "assistant", id: str = "r") -> Row:
    return make_row(role, id=id, parts=parts)


def test_text_row_is_text_plus_framing() -> None:
    r = make_row("user", "Hello there, how are you?", id="u1")
    got = count_row(r, GPT).tokens
    assert got == text_tokens("Hello there, how are you?") + text_tokens("user") + 4


def test_request_framing_system_and_reasoning() -> None:
    rows = [row(Part(type="reasoning", text="thinking hard"), Part(type="text", text="done"))]
    got = count_request("You are terse.", rows, [], GPT).tokens
    want = (
        allow.REQUEST_FRAMING
        + text_tokens("You are terse.")
        + allow.MESSAGE_FRAMING
        + text_tokens("assistant")
        + allow.MESSAGE_FRAMING
        + text_tokens("thinking hard")
        + text_tokens("done")
    )
    assert got == want


def test_genuine_image_part_gets_media_allowance_not_its_base64() -> None:
    image = row(Part(type="file", mediaType="image/png", url=PNG))
    got = count_row(image, GPT).tokens
    assert got == text_tokens("assistant") + allow.MESSAGE_FRAMING + allow.IMAGE
    assert text_tokens(PNG) > allow.IMAGE  # counting it as text would have been different


def test_data_url_inside_text_counts_as_text() -> None:
    as_text = row(Part(type="text", text=f"look: {PNG}"))
    assert count_row(as_text, GPT).tokens == (
        text_tokens("assistant") + allow.MESSAGE_FRAMING + count_text(f"look: {PNG}", GPT).tokens
    )


def test_image_shaped_dict_in_tool_json_counts_as_text() -> None:
    shaped = {"type": "image", "mediaType": "image/png", "data": PNG[22:]}
    r = row(tool_part(input={"path": "a.png"}, output=shaped))
    counted = count_row(r, GPT).tokens
    assert counted > text_tokens(json.dumps(shaped, separators=(",", ":")))
    # ... whereas the supported wrapper with the same payload is media:
    wrapped = {
        "type": "content",
        "value": [{"type": "media", "data": PNG[22:], "mediaType": "image/png"}],
    }
    media = count_row(row(tool_part(input={"path": "a.png"}, output=wrapped)), GPT).tokens
    assert media < counted
    json_input = json.dumps({"path": "a.png"}, separators=(",", ":")).encode()
    framing = text_tokens("assistant") + allow.MESSAGE_FRAMING + allow.TOOL_CALL_FRAMING
    names = text_tokens("file_read") + text_tokens("call-1")
    assert media == (
        framing
        + names
        + text_tokens(json_input.decode())
        + allow.json_allowance(json_input)
        + allow.TOOL_RESULT_FRAMING
        + allow.IMAGE
    )


def test_tool_output_wrappers() -> None:
    def output_tokens(output: Any) -> int:
        return count_row(row(tool_part(output=output)), GPT).tokens

    base = output_tokens("")
    assert output_tokens({"type": "text", "value": "file contents"}) == base + text_tokens(
        "file contents"
    )
    assert output_tokens("file contents") == base + text_tokens("file contents")
    mixed = {
        "type": "content",
        "value": [
            {"type": "text", "text": "a"},
            {"type": "media", "data": "AAAA", "mediaType": "application/pdf"},
        ],
    }
    assert output_tokens(mixed) == base + text_tokens("a") + allow.OTHER_MEDIA_MIN
    # An extra key means it is not the wrapper: plain JSON.
    odd = {"type": "text", "value": "x", "extra": 1}
    encoded = json.dumps(odd, separators=(",", ":")).encode()
    assert output_tokens(odd) == base + text_tokens(encoded.decode()) + allow.json_allowance(
        encoded
    )


def test_textual_file_is_text_and_other_media_scale_with_size() -> None:
    small_pdf = "data:application/pdf;base64," + "A" * 400
    big_pdf = "data:application/pdf;base64," + "A" * 400_000
    assert allow.media_allowance("application/pdf", 400) == allow.OTHER_MEDIA_MIN
    assert allow.media_allowance("application/pdf", 400_000) == 300_000 // 16
    frame = text_tokens("assistant") + allow.MESSAGE_FRAMING
    pdf = count_row(row(Part(type="file", mediaType="application/pdf", url=big_pdf)), GPT).tokens
    assert pdf == frame + 300_000 // 16
    small = count_row(row(Part(type="file", mediaType="application/pdf", url=small_pdf)), GPT)
    assert small.tokens == frame + allow.OTHER_MEDIA_MIN
    text_file = "data:text/plain;base64," + base64.b64encode(b"hello").decode()
    as_text = count_row(row(Part(type="file", mediaType="text/plain", url=text_file)), GPT)
    assert as_text.tokens == frame + text_tokens(text_file)


def test_json_allowance_covers_other_serializations() -> None:
    payload = {
        "path": "src/ü/日本.py",
        "content": 'def f():\n    return "quoted \\ text"\n' * 20,
        "lines": list(range(50)),
        "nested": [{"a": None, "b": True, "c": 1.5}] * 10,
    }
    compact = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()
    ours = text_tokens(compact.decode()) + allow.json_allowance(compact)
    variants = (
        json.dumps(payload),
        json.dumps(payload, indent=2),
        json.dumps(payload, separators=(",", ":")),
    )
    for variant in variants:
        assert ours >= text_tokens(variant)


def test_only_advertised_tools_are_counted() -> None:
    schema = {
        "name": "session_history",
        "description": "Look up earlier windows.",
        "parameters": {"type": "object", "properties": {"action": {"type": "string"}}},
    }
    none = count_request("", [], [], GPT).tokens
    one = count_request("", [], [schema], GPT).tokens
    two = count_request("", [], [schema, {**schema, "name": "other"}], GPT).tokens
    assert none == allow.REQUEST_FRAMING
    assert one > none + allow.TOOLS_PREAMBLE
    assert two > one


def test_estimate_families_scale_text_not_allowances() -> None:
    rows = [make_row("user", "some words " * 100, id="u")]
    exact = count_request("", rows, [], GPT)
    claude = count_request("", rows, [], "anthropic:claude-sonnet-4-5")
    assert exact.exact and not claude.exact
    text = text_tokens("some words " * 100) + text_tokens("user")
    fixed = allow.REQUEST_FRAMING + allow.MESSAGE_FRAMING
    assert exact.tokens == text + fixed
    assert claude.tokens == -(-text * 3 // 2) + fixed


def test_ceiling_stops_counting_and_marks_incomplete() -> None:
    rows = [make_row("user", "lorem ipsum " * 2000, id=f"u{i}") for i in range(20)]
    full = count_request("", rows, [], GPT)
    stopped = count_request("", rows, [], GPT, ceiling=10_000)
    assert full.complete and full.tokens > 10_000
    assert not stopped.complete and 10_000 < stopped.tokens < full.tokens
    fits = count_request("", rows, [], GPT, ceiling=full.tokens)
    assert fits.complete and fits.tokens == full.tokens


class SpyEncoder:
    """A real encoder that records how many code points it was asked to encode."""

    def __init__(self) -> None:
        self.inner = encodings.get("o200k_base")
        self.name = "o200k_base"
        self.encoded = 0

    def encode_ordinary(self, text: str) -> list[int]:
        self.encoded += len(text)
        return list(self.inner.encode_ordinary(text))


def test_recount_after_append_encodes_only_the_new_row() -> None:
    spy = SpyEncoder()
    counter = RequestCounter(spy)
    rows = [make_row("user", f"message {i} " * 200, id=f"u{i}") for i in range(50)]
    first = counter.request("system prompt", rows, [])
    spy.encoded = 0
    new = make_row("user", "a short reply", id="a")
    second = counter.request("system prompt", [*rows, new], [])
    assert spy.encoded == len("a short reply")
    fresh = RequestCounter(encodings.get("o200k_base")).request("system prompt", [*rows, new], [])
    assert second == fresh
    assert second.text > first.text


def test_memo_also_hits_equal_rows_read_again() -> None:
    spy = SpyEncoder()
    counter = RequestCounter(spy)
    original = make_row("user", "the same words " * 100, id="u")
    counter.row(original)
    spy.encoded = 0
    reread = make_row("user", "the same words " * 100, id="u")
    assert counter.row(reread) == counter.row(original)
    assert spy.encoded == 0
    changed = make_row("user", "other words " * 100, id="u")
    counter.row(changed)
    assert spy.encoded > 0


def test_rows_with_lone_surrogates_still_count() -> None:
    r = make_row("user", "bad \ud800 char", id="s")
    assert count_row(r, GPT).tokens == text_tokens("user") + 4 + text_tokens("bad \ud800 char")


def test_unknown_part_types_are_counted_as_json() -> None:
    r = row(Part(type="source-url", url="https://example.com/" + "x" * 100))
    assert count_row(r, GPT).tokens > 30
    assert count_row(row(Part(type="step-start")), GPT).tokens == text_tokens("assistant") + 4


def test_approximation_is_labelled_and_never_exact() -> None:
    rows = [make_row("user", "x" * 400, id="u")]
    approx = approximate_request("", rows, [])
    assert (approx.tokens, approx.encoding, approx.exact) == (100, "approximate", False)
    assert count_request("", rows, [], resolve_model(GPT)).encoding == "o200k_base"


@pytest.mark.parametrize("model", ["openai:gpt-4o", "openai:gpt-4"])
def test_to_json_shape(model: str) -> None:
    got = count_request("hi", [], [], model).to_json()
    assert set(got) == {"tokens", "encoding", "exact"}
