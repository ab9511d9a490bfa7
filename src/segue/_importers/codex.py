"""Codex rollouts: ``~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl``. Pure.

Each line is ``{"timestamp", "type", "payload"}``:

* ``session_meta``: a session begins (``payload.id``): a new session;
* ``response_item``: what the model saw and said — ``message`` (``role`` user / assistant /
  developer, ``content`` of ``input_text`` / ``output_text`` parts), ``function_call``
  (``name``, ``arguments`` as a JSON string, ``call_id``), ``custom_tool_call`` (``input``),
  ``local_shell_call`` (``action``), their ``*_output`` items (``call_id``, ``output`` as text,
  a list of parts, or ``{content, success}``), and ``reasoning`` (left out, R25);
* ``compacted``: a compaction summary (``payload.message``);
* ``turn_context`` (the model of what follows), ``event_msg`` (UI events that duplicate the
  response items) and later types: skipped.

Older rollouts wrote the items bare, after a first line of session metadata (``id``,
``timestamp``, ``instructions``), with ``record_type: "state"`` lines between; both shapes
are read. User messages Codex injects itself (``<environment_context>``, the AGENTS.md
instructions) are not the user's words and are skipped. Images (``input_image`` parts, in a
message or a tool output) become ``[media omitted]`` (R25). A session whose ``session_meta``
names a sub-agent source (``source: {"subagent": …}``) is that sub-agent's, under its parent
thread when the source names one. A ``function_call`` whose ``arguments`` cannot be decoded
(not JSON, nested too deeply) keeps them as text. A line that fits neither shape refuses the
whole file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from segue._importers.entries import (
    MEDIA,
    Entry,
    Message,
    SessionStart,
    Summary,
    ToolCall,
    ToolResult,
    cap_input,
    cut,
    iso_ms,
    json_lines,
    refuse,
)

FORMAT = "codex"
_INJECTED = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions")
_CALLS = ("function_call", "custom_tool_call", "local_shell_call")
_OUTPUTS = ("function_call_output", "custom_tool_call_output", "local_shell_call_output")
_ITEMS = ("message", "reasoning", *_CALLS, *_OUTPUTS, "web_search_call")


_IMAGES = ("input_image", "image", "output_image")


def parse(data: bytes | Iterable[bytes], source: str) -> list[Entry]:
    entries: list[Entry] = []
    model: str | None = None
    session = "session"  # line numbers are unique within one session's rollout
    for number, obj in json_lines(data, source):
        ts = iso_ms(obj.get("timestamp"))
        kind = obj.get("type")
        payload = obj.get("payload")
        if isinstance(kind, str) and isinstance(payload, dict):
            if kind == "session_meta":
                session = _session_id(payload, number)
                parent, agent = _sub_agent(payload, session)
                entries.append(SessionStart(parent, ts, agent, source))
            elif kind == "turn_context":
                found = payload.get("model")
                model = found if isinstance(found, str) else model
            elif kind == "compacted":
                text = payload.get("message")
                if isinstance(text, str) and text:
                    entries.append(Summary(f"{session}:line{number}", text, ts))
            elif kind == "response_item":
                entries += _item(payload, f"{session}:line{number}", ts, model, source)
            continue
        if "record_type" in obj:
            continue
        if isinstance(kind, str) and kind in _ITEMS:
            entries += _item(obj, f"{session}:line{number}", ts, model, source)
        elif kind is None and isinstance(obj.get("id"), str) and not entries:
            session = obj["id"]
            entries.append(SessionStart(session, ts, None, source))
        else:
            raise refuse(source, number, "neither a rollout line {timestamp, type, payload} "
                         "nor a response item")
    return entries


def _session_id(payload: dict[str, Any], number: int) -> str:
    sid = payload.get("id")
    return sid if isinstance(sid, str) and sid else f"session{number}"


def _sub_agent(payload: dict[str, Any], session: str) -> tuple[str, str | None]:
    """(the session the rows belong to, the sub-agent) for a session's metadata: a sub-agent
    session belongs to its parent thread where the metadata names one."""
    origin = payload.get("source")
    if not isinstance(origin, dict):
        return session, None
    sub = origin.get("subagent", origin.get("sub_agent"))
    if sub is None:
        return session, None
    parent = None
    stack: list[Any] = [sub]
    while stack and parent is None:  # {"thread_spawn": {"parent_thread_id": …}} and kin
        item = stack.pop()
        if isinstance(item, dict):
            found = item.get("parent_thread_id", item.get("parentThreadId"))
            parent = found if isinstance(found, str) and found else None
            stack.extend(item.values())
    return (parent or session), session


def _item(
    item: dict[str, Any], ident: str, ts: int | None, model: str | None, source: str
) -> list[Entry]:
    number = int(ident.rpartition(":line")[2])
    itype = item.get("type")
    if itype == "message":
        role = item.get("role")
        content = item.get("content")
        if not isinstance(content, list):
            raise refuse(source, number, "a message item without a 'content' list")
        text = _texts(content)
        if role == "user" and text and not text.lstrip().startswith(_INJECTED):
            return [Message(ident, "user", text, ts)]
        if role == "assistant" and text:
            return [Message(ident, "assistant", text, ts, model)]
        return []
    if itype in _CALLS:
        call = item.get("call_id") or item.get("id")
        if not isinstance(call, str):
            raise refuse(source, number, f"a {itype} without a string 'call_id'")
        name = item.get("name") if itype != "local_shell_call" else "local_shell"
        label = name if isinstance(name, str) else str(itype)
        return [ToolCall(ident, call, label, cap_input(_input(item)), ts, model)]
    if itype in _OUTPUTS:
        call = item.get("call_id")
        if not isinstance(call, str):
            raise refuse(source, number, f"a {itype} without a string 'call_id'")
        text, failed = _output(item.get("output"))
        return [ToolResult(call, text, failed)]
    return []  # reasoning (R25), web searches and later item types


def _input(item: dict[str, Any]) -> Any:
    if item.get("type") == "local_shell_call":
        return item.get("action")
    if item.get("type") == "custom_tool_call":
        return {"input": item.get("input")}
    raw = item.get("arguments")
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except (ValueError, RecursionError):
            return {"arguments": cut(raw)}
    return raw


def _output(output: Any) -> tuple[str, bool]:
    if isinstance(output, str):
        return output, False
    if isinstance(output, list):
        return _texts(output), False
    if isinstance(output, dict):
        content = output.get("content")
        if isinstance(content, str):
            text = content
        elif isinstance(content, list):
            text = _texts(content)
        else:
            text = _dumps(output)
        return text, output.get("success") is False
    return "" if output is None else _dumps(output), False


def _dumps(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (ValueError, RecursionError):
        return "[output nested too deeply to import]"


def _texts(content: list[Any]) -> str:
    """The text of a message's (or an output's) parts, an image as ``[media omitted]``."""
    out: list[str] = []
    for part in content:
        if not isinstance(part, dict):
            continue
        if isinstance(part.get("text"), str):
            out.append(part["text"])
        elif part.get("type") in _IMAGES:
            out.append(MEDIA)
    return "\n".join(t for t in out if t)
