"""Recorded agent runs (SWE-agent trajectories) as segue rows: realistic text for the demo,
benchmarks and tests.

A trajectory is JSON with a ``history`` list of ``{role, content, tool_calls?, tool_call_ids?}``
messages (roles ``system | user | assistant | tool``). Conversion rules, all pure:

* ``system`` → a system row, ``user`` → a user row, ``assistant`` → an assistant row, each with
  the content as one text part (an empty content gives no text part).
* An assistant message's ``tool_calls`` become ``dynamic-tool`` parts of that row (``toolCallId``,
  ``toolName``, ``input`` = the decoded JSON arguments, ``state: "input-available"``). The
  ``tool`` messages that follow fill in ``output`` and move the part to ``"output-available"``,
  which is how Xum stores a finished call: call and result live in one assistant row. The row is
  emitted once the next non-tool message arrives, so call and result are never split.
* With ``actions_as_tools=True``, older trajectories (an assistant ``action`` string followed by
  the environment's observation as a user message) are converted the same way: a ``bash`` call
  whose output is the observation. The assistant text is then the ``thought`` only, because
  the content repeats the action in a code block.
* Anything that does not fit (a tool result without its call, arguments that are not JSON) is
  a :class:`TrajectoryFormatError`: a recorded run is never silently altered.

Rows get ids ``<prefix>-<n>`` and timestamps ``start_ms + n * step_ms``; no ``historySequence``
(the store assigns it) and no ``workspaceId``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

from segue._errors import TrajectoryFormatError
from segue._messages import Part, Row, make_row

#: 2023-11-14T22:13:20Z: a fixed, plausible start so converted rows are reproducible.
DEFAULT_START_MS = 1_700_000_000_000
_DATA_DIR = "data"
_SUFFIX = ".traj"


@dataclass(frozen=True)
class Trajectory:
    """One recorded run: its file name (without ``.traj``) and its history messages."""

    name: str
    messages: tuple[Mapping[str, Any], ...]


def parse_trajectory(data: bytes | str, name: str) -> Trajectory:
    """Read a ``.traj`` document; only its ``history`` is kept."""
    try:
        doc = json.loads(data)
    except ValueError as exc:
        raise TrajectoryFormatError(f"trajectory {name!r} is not JSON: {exc}") from None
    history = doc.get("history") if isinstance(doc, dict) else None
    if not isinstance(history, list) or not all(isinstance(m, dict) for m in history):
        raise TrajectoryFormatError(f"trajectory {name!r} has no 'history' list of messages")
    return Trajectory(name=name, messages=tuple(history))


def _content_text(message: Mapping[str, Any], where: str) -> str:
    content = message.get("content", "")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    # OpenAI-style content lists: only text blocks carry something a transcript can hold.
    if isinstance(content, list):
        texts: list[str] = []
        for block in content:
            if not (isinstance(block, dict) and block.get("type") == "text"):
                raise TrajectoryFormatError(f"{where}: unsupported content block {block!r:.80}")
            texts.append(str(block.get("text", "")))
        return "".join(texts)
    raise TrajectoryFormatError(f"{where}: content must be text, got {type(content).__name__}")


def _tool_call_part(call: Any, where: str) -> Part:
    if not isinstance(call, dict):
        raise TrajectoryFormatError(f"{where}: a tool call must be an object")
    function = call.get("function")
    call_id = call.get("id")
    if not isinstance(function, dict) or not isinstance(call_id, str):
        raise TrajectoryFormatError(f"{where}: a tool call needs 'id' and 'function'")
    name = function.get("name")
    arguments = function.get("arguments", "{}")
    if not isinstance(name, str):
        raise TrajectoryFormatError(f"{where}: tool call {call_id!r} has no name")
    try:
        decoded = json.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError:
        raise TrajectoryFormatError(
            f"{where}: tool call {call_id!r} arguments are not JSON"
        ) from None
    return Part(
        type="dynamic-tool",
        toolCallId=call_id,
        toolName=name,
        input=decoded,
        state="input-available",
    )


def _text_parts(text: str) -> tuple[Part, ...]:
    return (Part(type="text", text=text, state="done"),) if text else ()


class _Builder:
    """Accumulates rows; holds back the assistant row whose tool results are still arriving."""

    def __init__(self, prefix: str, start_ms: int, step_ms: int) -> None:
        self.rows: list[Row] = []
        self.pending: list[Part] | None = None
        self.prefix = prefix
        self.start_ms = start_ms
        self.step_ms = step_ms

    def emit(self, role: str, parts: Sequence[Part]) -> None:
        n = len(self.rows)
        self.rows.append(
            make_row(
                "system" if role == "system" else "user" if role == "user" else "assistant",
                id=f"{self.prefix}-{n}",
                parts=parts,
                metadata={"timestamp": self.start_ms + n * self.step_ms},
            )
        )

    def hold(self, text: str, calls: list[Part]) -> None:
        self.flush()
        self.pending = [*_text_parts(text), *calls]

    def resolve(self, call_id: str, output: str, where: str) -> None:
        pending = self.pending if self.pending is not None else []
        for i, part in enumerate(pending):
            if part.type == "dynamic-tool" and part.toolCallId == call_id:
                if part.state == "output-available":
                    raise TrajectoryFormatError(f"{where}: second result for call {call_id!r}")
                pending[i] = Part(
                    type="dynamic-tool",
                    toolCallId=call_id,
                    toolName=part.toolName,
                    input=part.input,
                    state="output-available",
                    output=output,
                )
                return
        raise TrajectoryFormatError(f"{where}: tool result for unknown call {call_id!r}")

    def flush(self) -> None:
        if self.pending is not None:
            self.emit("assistant", self.pending)
            self.pending = None


def trajectory_rows(
    messages: Sequence[Mapping[str, Any]],
    *,
    prefix: str,
    start_ms: int = DEFAULT_START_MS,
    step_ms: int = 1000,
    actions_as_tools: bool = False,
) -> list[Row]:
    """Convert a trajectory's history messages to rows (see the module docstring)."""
    out = _Builder(prefix, start_ms, step_ms)
    i = 0
    while i < len(messages):
        message = messages[i]
        where = f"{prefix} message {i}"
        role = message.get("role")
        text = _content_text(message, where)
        if role == "tool":
            ids = message.get("tool_call_ids")
            if not (isinstance(ids, list) and len(ids) == 1 and isinstance(ids[0], str)):
                raise TrajectoryFormatError(f"{where}: a tool result needs one tool_call_id")
            out.resolve(ids[0], text, where)
        elif role == "assistant" and message.get("tool_calls"):
            calls = message["tool_calls"]
            if not isinstance(calls, list):
                raise TrajectoryFormatError(f"{where}: 'tool_calls' must be a list")
            out.hold(text, [_tool_call_part(c, where) for c in calls])
        elif role == "assistant" and actions_as_tools and _is_action_step(messages, i):
            out.flush()
            observation = messages[i + 1]
            thought = message.get("thought")
            call = Part(
                type="dynamic-tool",
                toolCallId=f"{prefix}-call-{i}",
                toolName="bash",
                input={"command": str(message["action"]).strip()},
                state="output-available",
                output=_content_text(observation, f"{prefix} message {i + 1}"),
            )
            visible = thought.strip() if isinstance(thought, str) else text
            out.emit("assistant", [*_text_parts(visible), call])
            i += 1  # the observation is now the call's output
        elif role in ("system", "user", "assistant"):
            out.flush()
            out.emit(role, _text_parts(text))
        else:
            raise TrajectoryFormatError(f"{where}: unknown role {role!r}")
        i += 1
    out.flush()
    return out.rows


def _is_action_step(messages: Sequence[Mapping[str, Any]], i: int) -> bool:
    action = messages[i].get("action")
    if not isinstance(action, str) or not action.strip() or i + 1 >= len(messages):
        return False
    following = messages[i + 1]
    # A demonstration replayed inside a user message is not this action's observation.
    return following.get("role") == "user" and not following.get("is_demo")


# -- packaged data ---------------------------------------------------------------------------


def _data_dir() -> Traversable:
    return resources.files("segue._demo").joinpath(_DATA_DIR)


def packaged_names() -> list[str]:
    """Names of the trajectories shipped in ``segue/_demo/data`` (sorted)."""
    root = _data_dir()
    return sorted(
        entry.name[: -len(_SUFFIX)] for entry in root.iterdir() if entry.name.endswith(_SUFFIX)
    )


def load_packaged(name: str) -> Trajectory:
    """One shipped trajectory by name (see :func:`packaged_names`)."""
    if name not in packaged_names():
        raise TrajectoryFormatError(
            f"no packaged trajectory {name!r}; available: {', '.join(packaged_names())}"
        )
    data = _data_dir().joinpath(name + _SUFFIX).read_bytes()
    return parse_trajectory(data, name)


def packaged_license() -> str:
    """The licence the shipped trajectories are distributed under (MIT, verbatim)."""
    return _data_dir().joinpath("LICENSE").read_text(encoding="utf-8")


def iter_packaged_rows(*, actions_as_tools: bool = False) -> Iterator[Row]:
    """Every shipped trajectory converted, one after another, with distinct id prefixes and
    timestamps that keep increasing across trajectories."""
    start = DEFAULT_START_MS
    for index, name in enumerate(packaged_names()):
        rows = trajectory_rows(
            load_packaged(name).messages,
            prefix=f"traj{index}",
            start_ms=start,
            actions_as_tools=actions_as_tools,
        )
        yield from rows
        start += (len(rows) + 1) * 1000
