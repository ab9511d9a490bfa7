"""A recorded agent run turned into what the demo plays: user turns, the scripted model's
responses, and the recorded tool results to replay. Pure.

Input is the rows of :func:`segue._demo.trajectory.trajectory_rows` (``actions_as_tools=True``),
converted from the run's messages minus its demonstrations (:func:`run_messages`).

Rules (each keeps the recorded run recognisable, none invents what the agent did):

* ``system`` rows are dropped: the recorded harness's prompt is not segue's agent prompt.
* Consecutive ``user`` rows form one send (joined by a blank line).
* Each ``assistant`` row is one model step: its text, and its tool calls with their recorded
  results (the :class:`RecordedCall` the replay tool answers with).
* A step without tool calls ends the turn, as it does in the engine. A run whose last step
  still calls tools gets one closing step (:data:`CLOSING_TEXT`) so the turn can end; an
  assistant step that follows a closing step with no user message in between starts a new
  turn with :data:`CONTINUE_PROMPT`. Both texts say that they are the demo's, not the run's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from segue._demo.trajectory import Trajectory
from segue._errors import TrajectoryFormatError
from segue._messages import Row

CLOSING_TEXT = "(demo: the recorded run ends here.)"
CONTINUE_PROMPT = "(demo: the recorded run goes on without a user message.) Continue."


@dataclass(frozen=True)
class RecordedCall:
    """One tool call of the recorded run and the observation the run got back."""

    call_id: str
    name: str
    input: Mapping[str, Any] = field(hash=False)
    output: str


@dataclass(frozen=True)
class Step:
    text: str
    calls: tuple[RecordedCall, ...]


@dataclass(frozen=True)
class Turn:
    prompt: str
    steps: tuple[Step, ...]


def run_messages(trajectory: Trajectory) -> list[Mapping[str, Any]]:
    """The run's own messages: demonstrations (``is_demo``) were examples shown to the
    recorded agent, not part of what it did."""
    return [m for m in trajectory.messages if not m.get("is_demo")]


def _step(row: Row) -> Step:
    calls: list[RecordedCall] = []
    for part in row.parts:
        if part.type != "dynamic-tool":
            continue
        if not isinstance(part.output, str) or not isinstance(part.input, dict):
            raise TrajectoryFormatError(
                f"row {row.id}: tool call {part.toolCallId!r} has no recorded text output"
            )
        calls.append(
            RecordedCall(part.toolCallId or "", part.toolName or "", dict(part.input), part.output)
        )
    return Step(row.text, tuple(calls))


def plan_turns(rows: Sequence[Row]) -> list[Turn]:
    """Cut converted rows into turns (see the module docstring)."""
    turns: list[Turn] = []
    prompt: list[str] = []
    steps: list[Step] = []

    def close() -> None:
        if steps and steps[-1].calls:
            steps.append(Step(CLOSING_TEXT, ()))
        turns.append(Turn("\n\n".join(prompt) if prompt else CONTINUE_PROMPT, tuple(steps)))
        prompt.clear()
        steps.clear()

    for row in rows:
        if row.role == "system":
            continue
        if row.role == "user":
            if steps:
                close()
            if row.text:
                prompt.append(row.text)
            continue
        step = _step(row)
        if not step.text and not step.calls:
            continue  # an empty recorded step says nothing and would end the turn early
        steps.append(step)
        if not step.calls:
            close()
    if steps:
        close()
    elif prompt:
        raise TrajectoryFormatError("the recorded run ends with a user message nobody answered")
    if not turns:
        raise TrajectoryFormatError("the recorded run has no agent steps")
    return turns


def recorded_calls(turns: Sequence[Turn]) -> list[RecordedCall]:
    """Every recorded call in the order the model makes them."""
    return [call for turn in turns for step in turn.steps for call in step.calls]


def script_responses(turns: Sequence[Turn]) -> list[dict[str, Any]]:
    """The scripted provider's responses (SPEC.md §5) for the replayed turns. No ``usage``:
    the provider then reports what each request really cost."""
    out: list[dict[str, Any]] = []
    for turn in turns:
        for step in turn.steps:
            response: dict[str, Any] = {"text": step.text}
            if step.calls:
                response["toolCalls"] = [
                    {"id": c.call_id, "name": c.name, "input": dict(c.input)} for c in step.calls
                ]
            out.append(response)
    return out
