"""Provider adapters: rows the engine counts as text reach the API as text (R19)."""

from __future__ import annotations

import base64

from segue._messages import Part, make_row
from segue._providers.anthropic_messages import anthropic_messages
from segue._providers.openai_chat import chat_messages
from segue._providers.request import ProviderRequest
from segue._tokens import count_request


def _request_with_text_attachment() -> ProviderRequest:
    body = "TODO: rename the flag\nline two"
    url = "data:text/plain;base64," + base64.b64encode(body.encode()).decode()
    row = make_row(
        "user",
        id="user-1",
        parts=[
            Part(type="text", text="see the attached notes", state="done"),
            Part(type="file", mediaType="text/plain", url=url, filename="notes.txt"),
        ],
    )
    return ProviderRequest("", (row,), ())


def test_text_attachment_is_sent_to_chat_completions_as_text() -> None:
    """A text/plain file part (as Xum sessions carry, e.g. after `segue history import`) is
    counted as text; Chat Completions must receive it as text instead of refusing the whole
    request — which would fail every later request of the workspace."""
    messages = chat_messages(_request_with_text_attachment())
    (user,) = [m for m in messages if m["role"] == "user"]
    assert isinstance(user["content"], str)
    assert "see the attached notes" in user["content"]
    assert "TODO: rename the flag\nline two" in user["content"]
    assert "notes.txt" in user["content"]


def test_text_attachment_is_sent_to_the_messages_api_as_a_text_block() -> None:
    (user,) = anthropic_messages(_request_with_text_attachment())
    texts = [b["text"] for b in user["content"] if b["type"] == "text"]
    assert texts[0] == "see the attached notes"
    assert any("TODO: rename the flag\nline two" in t for t in texts)
    assert all(b["type"] == "text" for b in user["content"])


def test_text_attachment_sent_is_not_larger_than_it_was_counted() -> None:
    """R17: the preflight count stays an upper bound of what is sent."""
    request = _request_with_text_attachment()
    counted = count_request("", request.rows, (), "openai:gpt-4o").tokens
    (user,) = [m for m in chat_messages(request) if m["role"] == "user"]
    sent = count_request(
        "", (make_row("user", user["content"], id="sent"),), (), "openai:gpt-4o"
    ).tokens
    assert sent <= counted
