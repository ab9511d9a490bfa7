"""pydantic-ai messages ⇄ segue rows (``pip install 'segue[pydantic-ai]'``).

One ``ModelMessage`` is one row, in the shape Xum writes (SPEC §3):

* a request with a user prompt → a ``user`` row with its text (media as ``file`` parts);
* a response with tool calls and the request that answers them (stored together, as a
  step is) → one ``assistant`` row: the response's text, thinking, and each call settled
  (``output-available``) with its result, as segue's own turns and the importers store a
  call; a retry (the tool failed or its arguments did not validate) is settled the same
  way, its output ``{"success": false, "error": …}``, as Xum stores a failed call (SPEC §3).
  Both messages are kept under ``metadata.pydanticAiMessages``;
* a request of tool returns and retries whose response was stored earlier → an
  ``assistant`` row of those settled calls, with the call's name and input;
* a request of system prompts only → a ``system`` row;
* any other response → an ``assistant`` row: text parts, ``dynamic-tool`` calls whose
  answers it was not stored with (state ``input-available``: interrupted, never sent),
  thinking as ``reasoning``; other parts keep it non-empty with an opaque
  ``data-pydantic-ai`` part.

The message itself is kept verbatim (``ModelMessagesTypeAdapter``'s JSON) under
``metadata.pydanticAiMessage`` and given back unchanged. A message read back carries the id
of its row in ``metadata["segueRowId"]``, which is how the history processor tells stored
messages from new ones. Rows segue wrote itself (a lead-in, a continuation) read back as
user prompts.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from segue._messages import Part, Role, Row, make_row

MESSAGE_KEY = "pydanticAiMessage"
#: a response and the answers to its calls, stored as one row
MESSAGES_KEY = "pydanticAiMessages"
ROW_ID_KEY = "segueRowId"
OPAQUE_PART = "data-pydantic-ai"


def stored_row_id(message: ModelMessage) -> str | None:
    meta = message.metadata
    value = meta.get(ROW_ID_KEY) if isinstance(meta, dict) else None
    return value if isinstance(value, str) else None


def calls_of(messages: Iterable[ModelMessage]) -> dict[str, tuple[str, Any]]:
    """``tool_call_id -> (tool name, input)`` of the tool calls in ``messages``."""
    found: dict[str, tuple[str, Any]] = {}
    for message in messages:
        if isinstance(message, ModelResponse):
            for part in message.parts:
                if isinstance(part, ToolCallPart):
                    found[part.tool_call_id] = (part.tool_name, part.args_as_dict())
    return found


def _user_parts(part: UserPromptPart) -> list[Part]:
    if isinstance(part.content, str):
        return [Part(type="text", text=part.content, state="done")]
    parts: list[Part] = []
    for piece in part.content:
        if isinstance(piece, str):
            parts.append(Part(type="text", text=piece, state="done"))
        else:
            media = getattr(piece, "media_type", None)
            url = getattr(piece, "url", None)
            parts.append(
                Part(
                    type="file",
                    mediaType=media if isinstance(media, str) else "application/octet-stream",
                    url=url if isinstance(url, str) else "",
                )
            )
    return parts


def message_row(
    message: ModelMessage,
    *,
    row_id: str,
    now_ms: int,
    calls: Mapping[str, tuple[str, Any]],
) -> Row:
    dumped = ModelMessagesTypeAdapter.dump_python([message], mode="json")[0]
    meta: dict[str, Any] = {"timestamp": now_ms, MESSAGE_KEY: dumped}
    parts: list[Part] = []
    role: Role
    if isinstance(message, ModelRequest):
        users = [p for p in message.parts if isinstance(p, UserPromptPart)]
        if users:
            role = "user"
            for user in users:
                parts.extend(_user_parts(user))
        elif all(isinstance(p, SystemPromptPart) for p in message.parts) and message.parts:
            role = "system"
            text = "\n\n".join(p.content for p in message.parts if isinstance(p, SystemPromptPart))
            parts.append(Part(type="text", text=text, state="done"))
        else:
            role = "assistant"
            for req_part in message.parts:
                if isinstance(req_part, RetryPromptPart) and not req_part.tool_name:
                    parts.append(Part(type="text", text=req_part.model_response(), state="done"))
                elif isinstance(req_part, RetryPromptPart | ToolReturnPart):
                    parts.append(
                        _tool_part(
                            req_part.tool_call_id,
                            calls,
                            req_part.tool_name or "",
                            "output-available",
                            _answer(req_part),
                        )
                    )
    else:
        role = "assistant"
        parts.extend(_response_parts(message))
    if not parts:
        parts.append(Part(type=OPAQUE_PART))
    return make_row(role, id=row_id, parts=parts, metadata=meta)


def _tool_part(
    call_id: str, calls: Mapping[str, tuple[str, Any]], name: str, state: str, output: Any
) -> Part:
    known_name, args = calls.get(call_id, (name, {}))
    return Part(
        type="dynamic-tool",
        toolCallId=call_id,
        toolName=known_name,
        input=args,
        state=state,
        output=output,
    )


def _answer(part: RetryPromptPart | ToolReturnPart[Any]) -> Any:
    """The output a call's answer settles its tool part with: a retry prompt is a failure."""
    if isinstance(part, RetryPromptPart):
        return {"success": False, "error": part.model_response()}
    return _failure(part) or _output(part)


def _failure(part: ToolReturnPart[Any]) -> dict[str, Any] | None:
    """A failed call's output as Xum stores one, for a return pydantic-ai marks as not a
    success (2.x: ``outcome`` ``"retried"`` / ``"failed"``); None for a success."""
    outcome = getattr(part, "outcome", None)
    if outcome is None or outcome == "success":
        return None
    content = part.content
    text = content if isinstance(content, str) else part.model_response_str()
    return {"success": False, "error": text}


def _output(part: ToolReturnPart[Any]) -> Any:
    """The tool's return value as JSON, or its text when it is not JSON-shaped."""
    text = part.model_response_str()
    try:
        return json.loads(text)
    except ValueError:
        return text


def batch_rows(
    messages: Sequence[ModelMessage],
    *,
    new_id: Callable[[], str],
    now_ms: int,
    calls: Mapping[str, tuple[str, Any]],
) -> tuple[list[Row], list[int]]:
    """The rows that store ``messages`` (one batch), and for each message the index of its
    row. A response whose tool calls the next message answers (tool returns and retries
    only) shares one row with that answer: its calls settled with their results."""
    rows: list[Row] = []
    owners: list[int] = []
    index = 0
    while index < len(messages):
        message = messages[index]
        answer = messages[index + 1] if index + 1 < len(messages) else None
        if (
            isinstance(message, ModelResponse)
            and isinstance(answer, ModelRequest)
            and _answers(message, answer)
        ):
            rows.append(_step_row(message, answer, row_id=new_id(), now_ms=now_ms))
            owners.extend([len(rows) - 1] * 2)
            index += 2
            continue
        rows.append(message_row(message, row_id=new_id(), now_ms=now_ms, calls=calls))
        owners.append(len(rows) - 1)
        index += 1
    return rows, owners


def _answers(response: ModelResponse, request: ModelRequest) -> bool:
    """Whether ``request`` holds exactly the answers to ``response``'s tool calls."""
    called = {p.tool_call_id for p in response.parts if isinstance(p, ToolCallPart)}
    answered: set[str] = set()
    for part in request.parts:
        if isinstance(part, ToolReturnPart | RetryPromptPart) and part.tool_name:
            answered.add(part.tool_call_id)
        else:
            return False
    return bool(called) and answered == called


def _step_row(response: ModelResponse, request: ModelRequest, *, row_id: str, now_ms: int) -> Row:
    """A response and the answers to its calls as one row of settled calls (Xum's shape)."""
    results: dict[str, Any] = {}
    for part in request.parts:
        if isinstance(part, RetryPromptPart | ToolReturnPart):
            results[part.tool_call_id] = _answer(part)
    parts = _response_parts(response, results)
    dumped = ModelMessagesTypeAdapter.dump_python([response, request], mode="json")
    meta: dict[str, Any] = {"timestamp": now_ms, MESSAGES_KEY: dumped}
    return make_row("assistant", id=row_id, parts=parts, metadata=meta)


def _response_parts(
    response: ModelResponse, results: Mapping[str, Any] | None = None
) -> list[Part]:
    """A response's parts as a row's. With ``results`` (the answers by call id) each call
    is settled (``output-available``); without, it waits for its answer."""
    parts: list[Part] = []
    for item in response.parts:
        if isinstance(item, TextPart):
            parts.append(Part(type="text", text=item.content, state="done"))
        elif isinstance(item, ThinkingPart):
            parts.append(Part(type="reasoning", text=item.content))
        elif isinstance(item, ToolCallPart):
            parts.append(
                Part(
                    type="dynamic-tool",
                    toolCallId=item.tool_call_id,
                    toolName=item.tool_name,
                    input=item.args_as_dict(),
                    state="input-available" if results is None else "output-available",
                    output=None if results is None else results[item.tool_call_id],
                )
            )
    return parts


def row_messages(row: Row) -> list[ModelMessage]:
    """The messages a row stands for, each stamped with the row's id."""
    stored = row.metadata.get(MESSAGE_KEY)
    many = row.metadata.get(MESSAGES_KEY)
    messages: list[ModelMessage]
    if isinstance(stored, dict):
        messages = list(ModelMessagesTypeAdapter.validate_python([stored]))
    elif isinstance(many, list) and many:
        messages = list(ModelMessagesTypeAdapter.validate_python(many))
    else:
        messages = _plain_messages(row)
    for message in messages:
        message.metadata = {**(message.metadata or {}), ROW_ID_KEY: row.id}
    return messages


def _plain_messages(row: Row) -> list[ModelMessage]:
    text = row.text
    if row.role == "user":
        return [ModelRequest(parts=[UserPromptPart(text)])] if text else []
    if row.role == "system":
        return [ModelRequest(parts=[SystemPromptPart(text)])] if text else []
    response_parts: list[TextPart | ToolCallPart] = [TextPart(text)] if text else []
    returns: list[ToolReturnPart] = []
    for part in row.parts:
        if part.type != "dynamic-tool" or part.state not in ("output-available", "output-error"):
            continue
        call_id = part.toolCallId or ""
        name = part.toolName or ""
        response_parts.append(ToolCallPart(name, part.input or {}, tool_call_id=call_id))
        returns.append(ToolReturnPart(name, part.output, tool_call_id=call_id))
    messages: list[ModelMessage] = []
    if response_parts:
        messages.append(ModelResponse(parts=response_parts))
    if returns:
        messages.append(ModelRequest(parts=returns))
    return messages


def is_send(message: ModelMessage) -> bool:
    """A request that carries a human prompt (the start of a run)."""
    return isinstance(message, ModelRequest) and any(
        isinstance(p, UserPromptPart) for p in message.parts
    )
