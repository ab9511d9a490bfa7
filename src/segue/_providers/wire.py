"""What both API adapters need before translating messages. Pure.

* :func:`complete_tool_pairs`: both APIs refuse a conversation in which a tool call is not
  answered by the very next message (OpenAI: a ``tool`` message per call id; Anthropic: a
  ``tool_result`` block per ``tool_use``). A turn cut off between a call and its result
  (Ctrl-C, a crash) leaves exactly that in the transcript. Rather than fail every later
  request, the call is answered with an explicit error result that says what happened, so the
  model sees it and nothing is hidden.
* :func:`tool_output_text`: tool outputs are JSON values; both APIs want text.
* :func:`data_url`: splits a ``data:`` URL for APIs that want base64 apart from its type.
* :func:`inline_text_media`: a text-like file part (``text/*``, JSON, XML, YAML) is counted as
  text by the guards (R19: text stays text), so it is sent as text, never refused as an
  unsupported attachment — a refusal would fail every later request of the workspace.
* :func:`usage_count`: a token figure of an SDK's usage object, or None where it is absent.
"""

from __future__ import annotations

import base64
import binascii
import json
import urllib.parse
from collections.abc import Sequence
from typing import Any

from segue._providers.request import Block, Media, Message, Text, ToolCall, ToolResult
from segue._tokens.request import TEXTUAL_MEDIA

NOT_COMPLETED = {
    "ok": False,
    "error": {"code": "not_completed",
              "message": "this tool call was interrupted before it produced a result"},
}


def complete_tool_pairs(messages: Sequence[Message]) -> list[Message]:
    pending = list(messages)
    out: list[Message] = []
    for index, message in enumerate(pending):
        out.append(message)
        calls = [b for b in message.content if isinstance(b, ToolCall)]
        if message.role != "assistant" or not calls:
            continue
        following = pending[index + 1] if index + 1 < len(pending) else None
        answered = (
            {b.tool_call_id for b in following.content if isinstance(b, ToolResult)}
            if following is not None and following.role == "user" else set()
        )
        missing: list[Block] = [
            ToolResult(call.id, call.name, NOT_COMPLETED, is_error=True)
            for call in calls if call.id not in answered
        ]
        if not missing:
            continue
        if following is not None and following.role == "user":
            # Results go first in the next user message (Anthropic requires it; OpenAI's
            # tool messages come before the user's text in the translation anyway). The
            # list is edited ahead of the loop, which then reads the completed message.
            pending[index + 1] = Message("user", (*missing, *following.content))
        else:
            out.append(Message("user", tuple(missing)))
    return out


def tool_output_text(output: Any) -> str:
    if isinstance(output, str):
        return output
    return json.dumps(output, ensure_ascii=False, separators=(",", ":"))


def data_url(url: str) -> tuple[str, str] | None:
    """``(media_type, base64 data)`` of a base64 ``data:`` URL, else None."""
    if not url.startswith("data:"):
        return None
    header, sep, payload = url[5:].partition(",")
    if not sep or not header.endswith(";base64"):
        return None
    return header.removesuffix(";base64").split(";", 1)[0], payload


def inline_text_media(message: Message) -> Message:
    """``message`` with each text-like :class:`Media` block replaced by a :class:`Text` block
    holding the file's text (decoded from a ``data:`` URL; any other URL as it is, which is
    also what the guards counted)."""
    if not any(isinstance(b, Media) and _is_textual(b) for b in message.content):
        return message
    blocks: list[Block] = []
    for block in message.content:
        if isinstance(block, Media) and _is_textual(block):
            text = _media_text(block)
            if block.filename:
                text = f"[{block.filename}]\n{text}"
            # Adapters join a message's text blocks as they are: keep the file on its own line.
            blocks.append(Text(f"\n{text}" if blocks else text))
        else:
            blocks.append(block)
    return Message(message.role, tuple(blocks))


def _is_textual(media: Media) -> bool:
    return media.media_type.lower().startswith(TEXTUAL_MEDIA)


def _media_text(media: Media) -> str:
    if not media.url.startswith("data:"):
        return media.url
    header, sep, payload = media.url[5:].partition(",")
    if not sep:
        return media.url
    if header.endswith(";base64"):
        try:
            raw = base64.b64decode(payload, validate=True)
        except (binascii.Error, ValueError):
            # Not base64 after all: the URL is sent as the text it is (and was counted as).
            return media.url
        return raw.decode("utf-8", "replace")
    return urllib.parse.unquote(payload)


def usage_count(value: object) -> int | None:
    """A token figure as an SDK's usage object reports it; None when absent (not an int)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None
