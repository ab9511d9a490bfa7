"""OpenAI Agents SDK items ⇄ segue rows. Pure, and free of the SDK: items are the JSON
dictionaries of the Responses input format the SDK hands a ``Session``.

One item is one row, in the shape Xum writes (SPEC §3), so ``segue history``, Xum and
``session_history`` read an SDK session like any other:

* a message → a ``user`` / ``assistant`` / ``system`` row (``developer`` is ``system``) with
  its text parts; images and files become ``file`` parts (``[media omitted]`` in look-back);
* the calls of a step with their outputs (a run of ``function_call`` /
  ``function_call_output`` items stored together, as the SDK stores a step) → one assistant
  row whose ``dynamic-tool`` parts are the settled calls, state ``output-available`` with
  their outputs: Xum's vocabulary, as segue's own turns and the importers write a call and
  its result. A call whose output is not among them stays ``input-available`` (an
  interrupted call, SPEC §3: kept, never sent); an output whose call was stored earlier
  becomes a row of its own holding the call (name and input) with its result;
* anything else (reasoning, hosted tools) → an assistant row with a reasoning part or an
  opaque ``data-openai-agents`` part, so the row is never empty (an empty assistant row is
  never replayed, R22).

The item itself is kept verbatim under ``metadata.openaiAgentsItem`` (the items of a
step's row, in order, under ``metadata.openaiAgentsItems``; unknown fields survive every
rewrite), and :func:`row_items` gives them back unchanged: what the SDK stored is what it
reads, in the order it stored it. Rows segue wrote itself (a lead-in, a continuation, rows
of ``segue run``) become plain messages and call/output pairs.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from segue._messages import Part, Role, Row, make_row

ITEM_KEY = "openaiAgentsItem"
ITEMS_KEY = "openaiAgentsItems"
_TOOL_ITEMS = frozenset({"function_call", "function_call_output"})
OPAQUE_PART = "data-openai-agents"

_ROLES: dict[str, Role] = {
    "user": "user",
    "assistant": "assistant",
    "system": "system",
    "developer": "system",
}
_TEXT_TYPES = frozenset({"input_text", "output_text", "text", "summary_text"})


def _text_of(content: Any) -> tuple[str, list[Part]]:
    """The text of a message's content and its media parts."""
    if isinstance(content, str):
        return content, []
    texts: list[str] = []
    media: list[Part] = []
    if isinstance(content, list):
        for piece in content:
            if not isinstance(piece, Mapping):
                continue
            kind = piece.get("type")
            if kind in _TEXT_TYPES and isinstance(piece.get("text"), str):
                texts.append(piece["text"])
            elif kind == "refusal" and isinstance(piece.get("refusal"), str):
                texts.append(piece["refusal"])
            elif kind in ("input_image", "input_file", "input_audio"):
                url = piece.get("image_url") or piece.get("file_url") or ""
                media_type = "image/*" if kind == "input_image" else "application/octet-stream"
                media.append(
                    Part(
                        type="file",
                        mediaType=media_type,
                        url=url if isinstance(url, str) else "",
                        filename=piece.get("filename")
                        if isinstance(piece.get("filename"), str)
                        else None,
                    )
                )
    return "".join(texts), media


def _arguments(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)
        except ValueError:
            return {"arguments": raw}
        return parsed if isinstance(parsed, dict) else {"arguments": parsed}
    return raw if isinstance(raw, dict) else {}


def calls_of(items: Iterable[Mapping[str, Any]]) -> dict[str, tuple[str, Any]]:
    """``call_id -> (tool name, input)`` of the function calls among ``items``."""
    found: dict[str, tuple[str, Any]] = {}
    for item in items:
        if item.get("type") == "function_call" and isinstance(item.get("call_id"), str):
            found[item["call_id"]] = (str(item.get("name", "")), _arguments(item.get("arguments")))
    return found


def item_row(
    item: Mapping[str, Any],
    *,
    row_id: str,
    now_ms: int,
    calls: Mapping[str, tuple[str, Any]],
) -> Row:
    """The row that stores ``item``. ``calls`` names the tool of a ``function_call_output``
    whose call came earlier (in the same batch or the window)."""
    meta: dict[str, Any] = {"timestamp": now_ms, ITEM_KEY: copy.deepcopy(dict(item))}
    kind = item.get("type")
    role = item.get("role")
    if (kind is None or kind == "message") and isinstance(role, str) and role in _ROLES:
        text, media = _text_of(item.get("content"))
        parts: list[Part] = [Part(type="text", text=text, state="done")] if text else []
        parts.extend(media)
        if not parts:
            parts.append(Part(type=OPAQUE_PART))
        return make_row(_ROLES[role], id=row_id, parts=parts, metadata=meta)
    if kind == "function_call":
        return make_row("assistant", id=row_id, parts=[_call_part(item)], metadata=meta)
    if kind == "function_call_output":
        return make_row("assistant", id=row_id, parts=[_output_part(item, calls)], metadata=meta)
    if kind == "reasoning":
        text, _ = _text_of(item.get("summary"))
        return make_row(
            "assistant", id=row_id, parts=[Part(type="reasoning", text=text)], metadata=meta
        )
    return make_row("assistant", id=row_id, parts=[Part(type=OPAQUE_PART)], metadata=meta)


def batch_rows(
    items: Sequence[Mapping[str, Any]],
    *,
    new_id: Callable[[], str],
    now_ms: int,
    calls: Mapping[str, tuple[str, Any]],
) -> list[Row]:
    """The rows that store ``items`` (one ``add_items`` batch): each run of calls and
    outputs is one row of settled calls, every other item a row of its own."""
    rows: list[Row] = []
    run: list[Mapping[str, Any]] = []

    def flush() -> None:
        if len(run) == 1:
            rows.append(item_row(run[0], row_id=new_id(), now_ms=now_ms, calls=calls))
        elif run:
            rows.append(_step_row(run, row_id=new_id(), now_ms=now_ms, calls=calls))
        run.clear()

    for item in items:
        if item.get("type") in _TOOL_ITEMS:
            run.append(item)
            continue
        flush()
        rows.append(item_row(item, row_id=new_id(), now_ms=now_ms, calls=calls))
    flush()
    return rows


def _step_row(
    items: Sequence[Mapping[str, Any]],
    *,
    row_id: str,
    now_ms: int,
    calls: Mapping[str, tuple[str, Any]],
) -> Row:
    """One row for a run of calls and outputs: each call settled by its output when the run
    holds it, each output of an earlier call settled with that call's name and input."""
    outputs = {
        str(i.get("call_id", "")): i for i in items if i.get("type") == "function_call_output"
    }
    called = {str(i.get("call_id", "")) for i in items if i.get("type") == "function_call"}
    parts: list[Part] = []
    for item in items:
        call_id = str(item.get("call_id", ""))
        if item.get("type") == "function_call":
            parts.append(_call_part(item, outputs.get(call_id)))
        elif call_id not in called:
            parts.append(_output_part(item, calls))
    meta = {"timestamp": now_ms, ITEMS_KEY: [copy.deepcopy(dict(i)) for i in items]}
    return make_row("assistant", id=row_id, parts=parts, metadata=meta)



def _call_part(item: Mapping[str, Any], answer: Mapping[str, Any] | None = None) -> Part:
    """A ``function_call`` item as a tool part: settled by its ``answer`` (the item of its
    output) when there is one, else waiting for it."""
    return Part(
        type="dynamic-tool",
        toolCallId=str(item.get("call_id", "")),
        toolName=str(item.get("name", "")),
        input=_arguments(item.get("arguments")),
        state="output-available" if answer is not None else "input-available",
        output=answer.get("output") if answer is not None else None,
    )


def _output_part(item: Mapping[str, Any], calls: Mapping[str, tuple[str, Any]]) -> Part:
    """A ``function_call_output`` item of an earlier call, settled with the name and input
    ``calls`` knows for it."""
    call_id = str(item.get("call_id", ""))
    name, args = calls.get(call_id, ("", {}))
    return Part(
        type="dynamic-tool",
        toolCallId=call_id,
        toolName=name,
        input=args,
        state="output-available",
        output=item.get("output"),
    )

def row_items(row: Row) -> list[dict[str, Any]]:
    """The items a row stands for: the stored items themselves, or, for a row segue wrote,
    its text as a message and each settled tool call as a call and its output."""
    stored = row.metadata.get(ITEM_KEY)
    if isinstance(stored, dict):
        return [copy.deepcopy(stored)]
    many = row.metadata.get(ITEMS_KEY)
    if isinstance(many, list) and many and all(isinstance(i, dict) for i in many):
        return copy.deepcopy(many)
    items: list[dict[str, Any]] = []
    text = row.text
    if text:
        items.append({"role": row.role, "content": text})
    for part in row.parts:
        if part.type != "dynamic-tool" or part.state not in ("output-available", "output-error"):
            continue
        call_id = part.toolCallId or ""
        items.append(
            {
                "type": "function_call",
                "call_id": call_id,
                "name": part.toolName or "",
                "arguments": json.dumps(part.input if part.input is not None else {}),
            }
        )
        output = part.output
        items.append(
            {
                "type": "function_call_output",
                "call_id": call_id,
                "output": output if isinstance(output, str) else json.dumps(output),
            }
        )
    return items


def rows_items(rows: Sequence[Row]) -> list[dict[str, Any]]:
    return [item for row in rows for item in row_items(row)]


def is_human_input(item: Mapping[str, Any]) -> bool:
    """A message the caller typed (the SDK's turn input), not a step of the model."""
    kind = item.get("type")
    return (kind is None or kind == "message") and item.get("role") == "user"
